-- keys: 1
-- args: 1+
-- Set field/value pairs on a hash and give it a ttl.
-- KEYS[1] = hash
-- ARGV[1] = ttl in seconds
-- ARGV[2..] = field, value, field, value, ...
if (#ARGV - 1) % 2 ~= 0 then
  return redis.error_reply('ODDARGS fields and values must come in pairs')
end
local written = 0
for i = 2, #ARGV, 2 do
  written = written + redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
end
redis.call('EXPIRE', KEYS[1], ARGV[1])
return written
