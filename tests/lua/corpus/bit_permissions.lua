-- keys: 1
-- args: 2
-- Grant and revoke permission bits stored as an integer.
-- KEYS[1] = permission mask key
-- ARGV[1] = bits to grant
-- ARGV[2] = bits to revoke
local mask = tonumber(redis.call('GET', KEYS[1]) or '0')
mask = bit.bor(mask, tonumber(ARGV[1]))
mask = bit.band(mask, bit.bnot(tonumber(ARGV[2])))
redis.call('SET', KEYS[1], mask)
return {mask, bit.tohex(mask)}
