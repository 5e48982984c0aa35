-- ARGV[1] = step
local current
return current + tonumber(ARGV[1])
