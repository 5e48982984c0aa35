-- keys: 2
-- args: 2
-- Move points between two accounts that share a {hash tag}.
-- KEYS[1] = source hash, e.g. acct:{team7}:alice
-- KEYS[2] = target hash, e.g. acct:{team7}:bob
-- ARGV[1] = amount
-- ARGV[2] = transfer id, recorded on both sides
local amount = tonumber(ARGV[1])
local balance = tonumber(redis.call('HGET', KEYS[1], 'points') or '0')
if balance < amount then
  return {'REFUSED', balance}
end
redis.call('HINCRBY', KEYS[1], 'points', -amount)
redis.call('HINCRBY', KEYS[2], 'points', amount)
redis.call('HSET', KEYS[1], 'last_transfer', ARGV[2])
redis.call('HSET', KEYS[2], 'last_transfer', ARGV[2])
return {'DONE', balance - amount}
