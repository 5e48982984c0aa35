local globals_metatable = getmetatable(_G)
globals_metatable.__index = {}
return 1
