-- KEYS[1] = lock, ARGV[1] = owner
redis.call('SET', KEYS[1], ARGV[1])
return redis.call('INCR', 'owners:' .. ARGV[1])
