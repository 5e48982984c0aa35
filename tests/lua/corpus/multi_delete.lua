-- keys: 0+
-- args: 0
-- Delete every key given, one at a time to keep each command small.
local deleted = 0
for _, key in ipairs(KEYS) do
  deleted = deleted + redis.call('DEL', key)
end
return deleted
