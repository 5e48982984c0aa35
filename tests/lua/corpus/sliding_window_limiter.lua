-- keys: 1
-- args: 4
-- Sliding window log limiter on a sorted set of request timestamps.
-- KEYS[1] = sorted set of requests
-- ARGV[1] = now in milliseconds
-- ARGV[2] = window in milliseconds
-- ARGV[3] = limit
-- ARGV[4] = unique request id
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local used = redis.call('ZCARD', KEYS[1])
if used >= limit then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  local retry = 0
  if oldest[2] then
    retry = tonumber(oldest[2]) + window - now
  end
  return {'DENIED', used, retry}
end
redis.call('ZADD', KEYS[1], now, ARGV[4])
redis.call('PEXPIRE', KEYS[1], window)
return {'ALLOWED', used + 1}
