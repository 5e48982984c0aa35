#!lua flags=no-writes
-- keys: 1
-- args: 1
-- Read selected fields of a hash as a flat list.
-- KEYS[1] = hash
-- ARGV[1] = comma-separated field names
local fields = {}
for field in string.gmatch(ARGV[1], '[^,]+') do
  fields[#fields + 1] = field
end
if #fields == 0 then
  return {}
end
return redis.call('HMGET', KEYS[1], unpack(fields))
