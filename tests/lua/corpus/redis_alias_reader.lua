#!lua flags=no-writes
-- keys: 2
-- args: 0
-- Read two keys through an alias of the redis table.
-- KEYS[1] = profile hash
-- KEYS[2] = settings hash
local r = redis
local profile = r.call('HGETALL', KEYS[1])
local settings = r.call('HGETALL', KEYS[2])
return {#profile / 2, #settings / 2}
