-- KEYS[1] = quota, ARGV[1] = limit
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
return used / tonumber(ARGV[1])
