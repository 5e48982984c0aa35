-- keys: 2
-- args: 1
-- Acknowledge a job: drop it from processing and forget its attempts.
-- KEYS[1] = processing list
-- KEYS[2] = attempts hash
-- ARGV[1] = job payload
local removed = redis.call('LREM', KEYS[1], 1, ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
return removed
