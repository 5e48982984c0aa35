-- KEYS[1..] = prefixes with hash tags, one per queue
-- ARGV[1] = job id
local pushed = 0
for i = 1, #KEYS do
  pushed = pushed + redis.call('RPUSH', KEYS[i] .. 'waiting', ARGV[1])
end
return pushed
