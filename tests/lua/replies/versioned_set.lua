-- Sets a value if its version is the expected one; typed errors otherwise.
-- KEYS[1] = the versioned document (a hash: version, value)
-- ARGV[1] = the version the caller read
-- ARGV[2] = the new value
local current = tonumber(redis.call('HGET', KEYS[1], 'version') or '0')
local expected = tonumber(ARGV[1])
if ARGV[2] == '' then
  return redis.error_reply('INVALID the value is empty')
end
if current ~= expected then
  return redis.error_reply('CONFLICT expected ' .. expected .. ' found ' .. current)
end
if current >= 2 then
  error({err = 'FROZEN version ' .. current .. ' is the last one'})
end
redis.call('HSET', KEYS[1], 'version', current + 1, 'value', ARGV[2])
return current + 1
