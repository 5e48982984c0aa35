-- KEYS[1] = a user's permission bits
local permissions = tonumber(redis.call('GET', KEYS[1]) or '0')
return bit.band(permissions, bit.lshift(1, 40)) ~= 0 and 1 or 0
