-- KEYS[1] = key
return redis.call('GET', KEYS[1])
