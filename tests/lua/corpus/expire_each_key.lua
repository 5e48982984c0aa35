-- keys: 2
-- args: 1
-- Give both keys of a pair the same time to live, in a loop over KEYS.
-- KEYS[1] = first key, KEYS[2] = second key
-- ARGV[1] = time to live in milliseconds
local updated = 0
for i = 1, #KEYS do
  updated = updated + redis.call('PEXPIRE', KEYS[i], ARGV[1])
end
return updated
