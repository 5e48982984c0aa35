-- Counts its run, then returns an empty table whose metatable answers
-- `err` through __index: Redis reads the raw field, so this is no error.
-- KEYS[1] = a counter of executions
-- ARGV[1] = the text __index answers
redis.call('INCR', KEYS[1])
return setmetatable({}, {__index = {err = ARGV[1]}})
