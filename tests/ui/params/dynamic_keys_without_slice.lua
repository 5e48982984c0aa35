-- KEYS = keys to delete
local deleted = 0
for i = 1, #KEYS do
  deleted = deleted + redis.call('DEL', KEYS[i])
end
return deleted
