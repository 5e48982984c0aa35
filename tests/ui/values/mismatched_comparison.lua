-- KEYS[1] = counter, ARGV[1] = limit
local count = redis.call('INCR', KEYS[1])
if count > ARGV[1] then
  return 0
end
return 1
