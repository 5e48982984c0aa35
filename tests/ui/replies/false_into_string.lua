-- KEYS[1] = lock key
-- ARGV[1] = owner token
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return false
end
return redis.call('GET', KEYS[1] .. ':meta') or ''
