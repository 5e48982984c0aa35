-- KEYS[1] = set, ARGV[1] = JSON array of members
local members = cjson.decode(ARGV[1])
local removed = {}
for _, member in ipairs(members) do
  if redis.call('SISMEMBER', KEYS[1], member) == 1 then
    removed[#removed + 1] = member
  end
end
return redis.call('SREM', KEYS[1], unpack(removed))
