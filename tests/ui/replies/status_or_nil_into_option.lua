-- KEYS[1] = the lock, ARGV[1] = its owner, ARGV[2] = its lifetime in ms
return redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX')
