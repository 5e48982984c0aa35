-- Writes, then returns a literal BUSY error worded like the server's.
-- KEYS[1] = a counter of all executions
-- KEYS[2] = the execution log, a hash of call id => executions
-- ARGV[1] = the call's unique id
redis.call('HINCRBY', KEYS[2], ARGV[1], 1)
redis.call('INCR', KEYS[1])
return redis.error_reply('BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSCRIPT.')
