-- KEYS[1] = lock, ARGV[1] = owner
if redis.call('GET', KEYS[1]) == nil then
  return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', 30000) and 1 or 0
end
return 0
