-- Records one execution of a call: the fault tests compare this server-side
-- log with what each caller was told.
-- KEYS[1] = a counter of all executions
-- KEYS[2] = the execution log, a hash of call id => executions
-- ARGV[1] = the call's unique id
redis.call('HINCRBY', KEYS[2], ARGV[1], 1)
return redis.call('INCR', KEYS[1])
