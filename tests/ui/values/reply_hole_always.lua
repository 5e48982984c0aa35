-- KEYS[1] = first
local missing
return {redis.call('GET', KEYS[1]) or 'none', missing, 5}
