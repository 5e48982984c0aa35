-- KEYS[1] = job ids by due time, KEYS[2] = jobs, ARGV[1] = now
-- Moves every due job to the jobs hash.
local due = redis.call('ZRANGE', KEYS[1], '-inf', ARGV[1], 'BYSCORE')
for _, id in ipairs(due) do
  redis.call('HSET', KEYS[2], id, 'due')
end
return #due
