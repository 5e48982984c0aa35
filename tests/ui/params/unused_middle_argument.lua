-- KEYS[1] = lock
-- ARGV[1] = owner token
-- ARGV[2] = ttl in milliseconds (not used yet)
-- ARGV[3] = reason
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1 ], ARGV[3])
  return 1
end
return 0
