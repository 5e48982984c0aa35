-- KEYS[1] = the job's tag count, ARGV[1] = the job, as JSON
local job = cjson.decode(ARGV[1])
return redis.call('INCRBY', KEYS[1], job.tags + 0)
