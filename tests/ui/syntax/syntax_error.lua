-- KEYS[1] = counter
local current = redis.call('GET', KEYS[1])
if current == nil
  return 0
end
return current
