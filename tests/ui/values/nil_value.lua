-- KEYS[1] = counter
local next_value = redis.call('GET', KEYS[1]) + 1
redis.call('SET', KEYS[1], next_value)
return next_value
