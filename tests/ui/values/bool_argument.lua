-- KEYS[1] = feature flags; ARGV[1] = whether maintenance mode is on
if ARGV[1] == 'true' then
  return redis.call('HSET', KEYS[1], 'maintenance', 1)
end
return redis.call('HDEL', KEYS[1], 'maintenance')
