-- ARGV[1] = pattern of the session keys to expire
local expired = 0
for _, key in ipairs(redis.call('KEYS', ARGV[1])) do
  expired = expired + redis.call('EXPIRE', key, 60)
end
return expired
