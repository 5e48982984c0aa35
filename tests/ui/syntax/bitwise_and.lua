-- KEYS[1] = flags, ARGV[1] = mask
local flags = tonumber(redis.call('GET', KEYS[1]) or '0')
return flags & tonumber(ARGV[1])
