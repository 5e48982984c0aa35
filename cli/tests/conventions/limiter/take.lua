-- Takes one token when there is one.
local left = remaining(KEYS[1])
if left > 0 then
  redis.call('HINCRBY', KEYS[1], 'remaining', -1)
  redis.call('HSET', KEYS[1], 'at', now)
end
return left
