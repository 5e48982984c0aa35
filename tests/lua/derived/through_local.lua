-- KEYS[1] = prefix with a hash tag
-- ARGV[1] = job id
-- ARGV[2] = payload
local prefix = KEYS[1]
local job = prefix .. 'job:' .. ARGV[1]
redis.call('HSET', job, 'payload', ARGV[2])
return redis.call('HGET', job, 'payload')
