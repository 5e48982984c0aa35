-- Reads a job's payload and counts the read.
--
-- KEYS[1] = the queue's read counter
-- ARGV[1] = key prefix of the queue (hash-tagged), e.g. queue:{emails}:
-- ARGV[2] = job id
local payload = redis.call('HGET', ARGV[1] .. 'job:' .. ARGV[2], 'payload')
redis.call('INCR', KEYS[1])
return payload
