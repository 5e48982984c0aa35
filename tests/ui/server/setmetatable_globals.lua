-- ARGV[1] = unused
local _ = ARGV[1]
setmetatable(_G, {__index = function() return nil end})
return 1
