-- Counts its run, then raises an error table whose __newindex metamethod
-- keeps the server from adding its " script: …" suffix.
-- KEYS[1] = a counter of executions
-- ARGV[1] = the error, code first
redis.call('INCR', KEYS[1])
error(setmetatable({err = ARGV[1]}, {__newindex = function() end}))
