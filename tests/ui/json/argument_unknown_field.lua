-- KEYS[1] = the job's attempts counter, ARGV[1] = the job, as JSON
local job = cjson.decode(ARGV[1])
return redis.call('HSET', KEYS[1], job.job_id, job.attempts)
