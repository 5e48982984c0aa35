-- KEYS[1] = finished jobs, ARGV[1] = the job, as JSON
local job = cjson.decode(ARGV[1])
if job.done == 'true' then
  return redis.call('SADD', KEYS[1], job.jobId)
end
return 0
