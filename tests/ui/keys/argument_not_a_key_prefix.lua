-- KEYS[1] = job counter
-- ARGV[1] = queue prefix
-- ARGV[2] = job id
redis.call('INCR', KEYS[1])
return redis.call('HSET', ARGV[1] .. 'job:' .. ARGV[2], 'state', 'new')
