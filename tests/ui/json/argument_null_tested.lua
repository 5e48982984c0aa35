-- KEYS[1] = the job's note, ARGV[1] = the job, as JSON
local job = cjson.decode(ARGV[1])
if job.note then
  redis.call('SET', KEYS[1], job.note)
end
return job.attempts
