-- keys: 1
-- args: 2
-- Claim an idempotency key; a second claim sees the first one's state.
-- KEYS[1] = idempotency key
-- ARGV[1] = request fingerprint
-- ARGV[2] = claim ttl in seconds
local claimed = redis.call('SET', KEYS[1], cjson.encode({state = 'pending', fp = ARGV[1]}), 'NX', 'EX', ARGV[2])
if claimed then
  return {'CLAIMED'}
end
local existing = cjson.decode(redis.call('GET', KEYS[1]))
if existing.fp ~= ARGV[1] then
  return redis.error_reply('MISMATCH the key was used for another request')
end
return {'DUPLICATE', existing.state}
