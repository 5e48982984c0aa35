-- KEYS[1] = counter
return redis.call('INCRR', KEYS[1])
