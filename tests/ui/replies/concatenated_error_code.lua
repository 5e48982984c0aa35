-- KEYS[1] = document, ARGV[1] = expected version, ARGV[2] = body
local current = tonumber(redis.call('HGET', KEYS[1], 'version') or '0')
if current ~= tonumber(ARGV[1]) then
  return redis.error_reply('VERSION_CONFLCT expected ' .. ARGV[1] .. ' found ' .. current)
end
redis.call('HSET', KEYS[1], 'version', current + 1, 'body', ARGV[2])
return current + 1
