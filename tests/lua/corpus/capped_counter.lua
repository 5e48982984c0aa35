-- keys: 1
-- args: 2
-- Increment a counter without passing a cap.
-- KEYS[1] = counter
-- ARGV[1] = increment
-- ARGV[2] = cap
local cap = tonumber(ARGV[2])
local value = redis.call('INCRBY', KEYS[1], ARGV[1])
if value > cap then
  redis.call('DECRBY', KEYS[1], ARGV[1])
  return {'CAPPED', value - tonumber(ARGV[1])}
end
return {'OK', value}
