#!lua flags=no-write
-- KEYS[1] = counter
return redis.call('GET', KEYS[1])
