-- KEYS[1] = counter
local count = redis.call('INCR', KEYS[1])
redis.log(redis.LOG_NOTIC, 'counter at ' .. count)
return count
