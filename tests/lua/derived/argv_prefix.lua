-- KEYS[1] = a counter in the prefix's slot
-- ARGV[1] = key prefix (hash-tagged)
-- ARGV[2] = job id
-- ARGV[3] = payload
redis.call('HSET', ARGV[1] .. 'job:' .. ARGV[2], 'payload', ARGV[3])
return redis.call('INCR', KEYS[1])
