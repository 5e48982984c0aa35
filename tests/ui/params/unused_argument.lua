-- KEYS[1] = counter, ARGV[1] = step
return redis.call('INCR', KEYS[1])
