return redis.call('GETSET', KEYS[1], ARGV[1])
