-- keys: 2
-- args: 3
-- Store a cache entry only when its version is newer than the stored one.
-- KEYS[1] = cache entry
-- KEYS[2] = version key
-- ARGV[1] = value
-- ARGV[2] = version
-- ARGV[3] = ttl in milliseconds
local current = tonumber(redis.call('GET', KEYS[2]) or '0')
local incoming = tonumber(ARGV[2])
if incoming <= current then
  return {'STALE', current}
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
redis.call('SET', KEYS[2], incoming, 'PX', ARGV[3])
return {'STORED', incoming}
