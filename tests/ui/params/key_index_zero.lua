-- KEYS[1] = counter
return redis.call('INCR', KEYS[0])
