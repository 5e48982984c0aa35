-- KEYS[1] = name
local name = redis.call('GET', KEYS[1]) or ''
return string.uppr(name)
