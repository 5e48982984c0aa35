-- KEYS[1] = pointer to the current queue
local queue = redis.call('GET', KEYS[1])
if not queue then
  return 0
end
return redis.call('LLEN', queue .. ':jobs')
