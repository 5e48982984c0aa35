-- KEYS[1] = lock, ARGV[1] = owner token
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return redis.error_reply('NOT_OWNR the lock belongs to another owner')
end
return redis.call('DEL', KEYS[1])
