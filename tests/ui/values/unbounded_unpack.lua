-- KEYS[1] = the active jobs, KEYS[2] = the jobs to check for stalls
local active = redis.call('LRANGE', KEYS[1], 0, -1)
if #active > 0 then
  redis.call('SADD', KEYS[2], unpack(active))
end
return #active
