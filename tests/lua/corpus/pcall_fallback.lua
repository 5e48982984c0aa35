-- keys: 1
-- args: 1
-- Increment a counter, resetting it when it holds a non-integer value.
-- KEYS[1] = counter
-- ARGV[1] = increment
local result = redis.pcall('INCRBY', KEYS[1], ARGV[1])
if type(result) == 'table' and result.err then
  redis.log(redis.LOG_WARNING, 'resetting counter: ' .. result.err)
  redis.call('SET', KEYS[1], ARGV[1])
  return tonumber(ARGV[1])
end
return result
