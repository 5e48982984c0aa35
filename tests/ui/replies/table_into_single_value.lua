-- KEYS[1] = counter
local count = redis.call('INCR', KEYS[1])
return {'COUNTED', count}
