-- KEYS[1] = lock, ARGV[1] = owner token, ARGV[2] = ttl in ms
return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])
