-- Writes, then returns the error reply it is given: a code computed at run
-- time, which may look like any refusal of the server.
-- KEYS[1] = a counter of all executions
-- KEYS[2] = the execution log, a hash of call id => executions
-- ARGV[1] = the call's unique id
-- ARGV[2] = the error reply to return, code first
redis.call('HINCRBY', KEYS[2], ARGV[1], 1)
redis.call('INCR', KEYS[1])
return redis.error_reply(ARGV[2])
