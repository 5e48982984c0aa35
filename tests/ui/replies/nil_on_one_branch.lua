-- KEYS[1] = counter
-- ARGV[1] = limit
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local r = nil
if used > 0 then
  r = redis.call('PTTL', KEYS[1])
end
return {used, r, tonumber(ARGV[1])}
