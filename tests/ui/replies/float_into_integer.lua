-- KEYS[1] = bucket, ARGV[1] = capacity
local tokens = tonumber(redis.call('GET', KEYS[1]) or ARGV[1])
if tokens < 1 then
  return {'DENIED', 0, 0.5}
end
redis.call('DECR', KEYS[1])
return {'ALLOWED', tokens - 1}
