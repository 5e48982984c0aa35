-- KEYS[1] = bucket
local tokens = redis.call('DECR', KEYS[1])
if tokens < 0 then
  return {'DENIED', 'later'}
end
return {'ALLOWED', tokens}
