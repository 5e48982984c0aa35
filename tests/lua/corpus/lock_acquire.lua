-- keys: 1
-- args: 2
-- Acquire a lock for an owner, for a limited time.
-- Returns 1 when acquired, 0 when someone else holds it.
-- KEYS[1] = lock key
-- ARGV[1] = owner token
-- ARGV[2] = ttl in milliseconds
local acquired = redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])
if acquired then
  return 1
end
return 0
