-- KEYS[1] = counter, ARGV[1] = limit
local count = redis.call('INCR', KEYS[1])
if count > tonumber(ARGV[1]) then
  return {'DENYED', count, 1000}
end
return {'ALLOWED', count}
