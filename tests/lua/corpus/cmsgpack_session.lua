-- keys: 1
-- args: 3
-- Store a session as MessagePack and touch its last-seen field.
-- KEYS[1] = session key
-- ARGV[1] = user id
-- ARGV[2] = now in seconds
-- ARGV[3] = ttl in seconds
local packed = redis.call('GET', KEYS[1])
local session = {user = ARGV[1], created = ARGV[2]}
if packed then
  session = cmsgpack.unpack(packed)
end
session.seen = ARGV[2]
redis.call('SET', KEYS[1], cmsgpack.pack(session), 'EX', ARGV[3])
return session.created
