-- keys: 1
-- args: 2
-- Fixed window rate limiter.
-- KEYS[1] = counter key of the current window
-- ARGV[1] = limit
-- ARGV[2] = window length in milliseconds
local limit = tonumber(ARGV[1])
local count = redis.call('INCR', KEYS[1])
if count == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
if count > limit then
  local retry = redis.call('PTTL', KEYS[1])
  return {'DENIED', count, retry}
end
return {'ALLOWED', count}
