-- KEYS[1] = lock, KEYS[2] = signal list, KEYS[3] = signal expiry (ms); ARGV[1] = owner
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[2])
redis.call('LPUSH', KEYS[2], 1)
redis.call('PEXPIRE', KEYS[2], KEYS[3])
return redis.call('DEL', KEYS[1])
