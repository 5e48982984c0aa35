-- KEYS[1] = prefix with a hash tag
-- ARGV[1] = job id
-- ARGV[2] = payload
local function key_of(prefix, name)
  return prefix .. name
end

local function store(prefix, id, payload)
  redis.call('HSET', prefix .. 'job:' .. id, 'payload', payload)
  redis.call('SADD', key_of(prefix, 'ids'), id)
end

store(KEYS[1], ARGV[1], ARGV[2])
local ids = key_of(KEYS[1], 'ids')
return redis.call('SCARD', ids)
