-- keys: 1
-- args: 4
-- Counting semaphore with expiring holders.
-- KEYS[1] = holders sorted set
-- ARGV[1] = capacity
-- ARGV[2] = holder id
-- ARGV[3] = now in milliseconds
-- ARGV[4] = lease in milliseconds
local now = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZSCORE', KEYS[1], ARGV[2]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[4]), ARGV[2])
  return {'HELD'}
end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then
  return {'FULL'}
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[4]), ARGV[2])
return {'ACQUIRED'}
