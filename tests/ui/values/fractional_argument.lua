-- KEYS[1] = session, ARGV[1] = ttl in seconds
local ttl = tonumber(ARGV[1])
redis.call('EXPIRE', KEYS[1], ttl / 2)
return 1
