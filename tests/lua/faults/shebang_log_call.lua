#!lua
-- Like log_call.lua, declared with a shebang and no flags: the server
-- checks OOM before running it.
-- KEYS[1] = a counter of all executions
-- KEYS[2] = the execution log, a hash of call id => executions
-- ARGV[1] = the call's unique id
redis.call('HINCRBY', KEYS[2], ARGV[1], 1)
return redis.call('INCR', KEYS[1])
