-- KEYS[1] = key, ARGV[1] = value
redis.call('SET', KEYS[1])
return ARGV[1]
