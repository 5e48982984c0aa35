-- KEYS[1] = queue
local length = redis.call('LLEN', KEYS[1])
return {length, redis.call('LRANGE', KEYS[1], 0, 9)}
