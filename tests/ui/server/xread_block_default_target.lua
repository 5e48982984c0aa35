-- KEYS[1] = stream
-- ARGV[1] = last id
return redis.call('XREAD', 'COUNT', 10, 'BLOCK', 0, 'STREAMS', KEYS[1], ARGV[1])
