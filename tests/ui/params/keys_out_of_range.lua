-- KEYS[1] = source, ARGV[1] = item
redis.call('LREM', KEYS[1], 0, ARGV[1])
return redis.call('LPUSH', KEYS[2], ARGV[1])
