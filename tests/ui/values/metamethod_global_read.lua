local counters = setmetatable({}, {
    __index = function(_, name)
        return defaults[name]
    end,
})
return counters.hits
