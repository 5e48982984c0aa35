-- KEYS[1] = session, ARGV[1] = value
redis.call('SET', KEYS[1], ARGV[1], 'EX', 1.5)
return 1
