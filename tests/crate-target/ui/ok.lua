-- KEYS[1] = a key, ARGV[1] = a value
return redis.call('SET', KEYS[1], ARGV[1])
