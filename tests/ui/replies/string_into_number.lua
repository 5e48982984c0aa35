-- KEYS[1] = the job's counter
local count = redis.call('INCR', KEYS[1])
if count > 10 then
  return 'too many'
end
return count
