-- KEYS[1] = the job's hash
local job = redis.call('HGETALL', KEYS[1])
return cjson.encode({jobId = KEYS[1], attempts = #job / 2})
