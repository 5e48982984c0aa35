-- keys: 1
-- args: 4
-- Token bucket: refill by elapsed time, then take tokens if available.
-- KEYS[1] = bucket hash (tokens, ts)
-- ARGV[1] = capacity
-- ARGV[2] = refill rate per second
-- ARGV[3] = now in milliseconds
-- ARGV[4] = tokens requested
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local requested = tonumber(ARGV[4])

local state = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(state[1]) or capacity
local last = tonumber(state[2]) or now

local elapsed = math.max(0, now - last)
tokens = math.min(capacity, tokens + elapsed * rate / 1000)

local allowed = tokens >= requested
if allowed then
  tokens = tokens - requested
end
redis.call('HSET', KEYS[1], 'tokens', tokens, 'ts', now)
redis.call('PEXPIRE', KEYS[1], math.ceil(capacity / rate * 1000))
if allowed then
  return {'ALLOWED', math.floor(tokens)}
end
return {'DENIED', math.floor(tokens), math.ceil((requested - tokens) / rate * 1000)}
