local now = tonumber(ARGV[1])
local function remaining(key)
  return tonumber(redis.call('HGET', key, 'remaining') or '0')
end
