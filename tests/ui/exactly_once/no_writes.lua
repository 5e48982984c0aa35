#!lua flags=no-writes
-- Reads a counter.
-- KEYS[1] = the counter
return redis.call('GET', KEYS[1])
