-- KEYS[1] = set
local members = redis.call('SMEMBERS', KEYS[1])
return redis.call('DEL', table.unpack(members))
