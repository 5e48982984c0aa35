-- KEYS[1] = the job's attempts counter
local job = {jobId = KEYS[1]}
job.attempts = redis.call('INCR', KEYS[1])
return cjson.encode(job)
