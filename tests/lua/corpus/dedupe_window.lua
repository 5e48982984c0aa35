-- keys: 1
-- args: 2
-- Remember message ids for a while; report whether one was seen.
-- KEYS[1] = seen set
-- ARGV[1] = message id
-- ARGV[2] = window in seconds
local added = redis.call('SADD', KEYS[1], ARGV[1])
if redis.call('TTL', KEYS[1]) < 0 then
  redis.call('EXPIRE', KEYS[1], ARGV[2])
end
if added == 1 then
  return {'NEW'}
end
return {'SEEN'}
