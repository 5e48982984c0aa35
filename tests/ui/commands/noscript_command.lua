-- KEYS[1] = counter
redis.call('MULTI')
return redis.call('INCR', KEYS[1])
