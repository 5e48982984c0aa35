-- KEYS[1] = a job hash
local defaults = { __index = function() return 'unknown' end }
local job = setmetatable({}, defaults)
job.state = redis.call('HGET', KEYS[1], 'state')
return setmetatable({ok = job.state}, defaults)
