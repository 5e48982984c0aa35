return redis.call('JSON.SET', KEYS[1], '$', ARGV[1])
