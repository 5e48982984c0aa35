-- KEYS[1] = lock
-- ARGV[1] = owner token
-- ARGV[2] = milliseconds to add
local token = redis.call('GET', KEYS[1])
if not token or token ~= ARGV[1] then
  return 0
end
local expiration = redis.call('PTTL', KEYS[1])
if not expiration then
  expiration = 0
end
if expiration < 0 then
  return 0
end
redis.call('PEXPIRE', KEYS[1], expiration + ARGV[2])
return 1
