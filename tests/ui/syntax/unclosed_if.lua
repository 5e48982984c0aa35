-- KEYS[1] = counter
-- ARGV[1] = limit
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if current < tonumber(ARGV[1]) then
  current = redis.call('INCR', KEYS[1])
return current
