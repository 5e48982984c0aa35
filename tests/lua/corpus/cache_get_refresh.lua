-- keys: 1
-- args: 1
-- Read a cached value and slide its expiry.
-- KEYS[1] = cache entry
-- ARGV[1] = ttl in seconds
local value = redis.call('GET', KEYS[1])
if value then
  redis.call('EXPIRE', KEYS[1], ARGV[1])
end
return value
