-- KEYS[1] = counter, ARGV[1] = divisor
local value = tonumber(redis.call('GET', KEYS[1]) or '0')
return value // tonumber(ARGV[1])
