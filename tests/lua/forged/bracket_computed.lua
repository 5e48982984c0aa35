-- Counts its run, then returns the message as an error reply whose key is
-- computed at run time.
-- KEYS[1] = a counter of executions
-- ARGV[1] = the error reply, code first
redis.call('INCR', KEYS[1])
local key = 'e' .. 'rr'
return {[key] = ARGV[1]}
