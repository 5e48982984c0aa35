-- Adds to a counter; the new value.
-- KEYS[1] = the counter
-- ARGV[1] = the amount
return redis.call('INCRBY', KEYS[1], ARGV[1])
