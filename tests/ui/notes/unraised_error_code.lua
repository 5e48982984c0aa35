-- KEYS[1] = lock, ARGV[1] = owner token
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return redis.error_reply('NOT_OWNER the lock is held by another token')
end
return redis.call('DEL', KEYS[1])
