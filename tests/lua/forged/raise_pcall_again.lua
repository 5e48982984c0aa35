-- Counts its run, catches an error table with `pcall` (which hands back
-- its message, a string) and raises that again.
-- KEYS[1] = a counter of executions
-- ARGV[1] = the error, code first
redis.call('INCR', KEYS[1])
local ok, caught = pcall(error, {err = ARGV[1]})
error(caught)
