-- KEYS[1] = a counter that may not exist yet
return redis.call('GET', KEYS[1])
