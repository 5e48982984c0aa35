-- KEYS[1] = document, ARGV[1] = expected version, ARGV[2] = body
local current = tonumber(redis.call('HGET', KEYS[1], 'version') or '0')
if current ~= tonumber(ARGV[1]) then
  return redis.error_reply('CONFLICT expected ' .. ARGV[1] .. ' found ' .. current)
end
if ARGV[2] == '' then
  return redis.error_reply('EMPTY body must not be empty')
end
redis.call('HSET', KEYS[1], 'version', current + 1, 'body', ARGV[2])
return current + 1
