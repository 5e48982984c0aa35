-- keys: 1
-- args: 2
-- Extend a lock's time to live when the caller owns it.
-- KEYS[1] = lock key
-- ARGV[1] = owner token
-- ARGV[2] = new ttl in milliseconds
local owner = redis.call('GET', KEYS[1])
if owner ~= ARGV[1] then
  return redis.error_reply('NOTOWNER the lock is held by someone else')
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return redis.status_reply('EXTENDED')
