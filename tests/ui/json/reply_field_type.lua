-- KEYS[1] = the job's hash
local attempts = redis.call('HGET', KEYS[1], 'attempts')
return cjson.encode({
  jobId = KEYS[1],
  attempts = attempts,
  done = false,
  tags = {},
})
