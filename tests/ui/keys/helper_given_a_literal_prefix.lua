-- KEYS[1] = queue prefix
-- ARGV[1] = job id
local function remove(prefix, id)
  return redis.call('DEL', prefix .. 'job:' .. id)
end
remove(KEYS[1], ARGV[1])
return remove('jobs:', ARGV[1])
