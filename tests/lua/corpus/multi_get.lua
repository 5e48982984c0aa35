#!lua flags=no-writes
-- keys: 0+
-- args: 0
-- Read many string keys at once; missing keys come back as false.
if #KEYS == 0 then
  return {0, 0}
end
local values = redis.call('MGET', unpack(KEYS))
local found = 0
for _, value in ipairs(values) do
  if value then
    found = found + 1
  end
end
return {found, #KEYS}
