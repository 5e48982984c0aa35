-- KEYS[1] = the counter, ARGV[1] = its new value
redis.call('EXPIRE', KEYS[1], 60)
return redis.call('SET', KEYS[1], ARGV[1])
