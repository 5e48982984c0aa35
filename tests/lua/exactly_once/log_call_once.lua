-- Counts one execution of a request and remembers the reply the first
-- execution gave: the exactly-once tests compare this server-side log with
-- what every caller was told.
-- KEYS[1] = a counter of all executions
-- KEYS[2] = the execution log, a hash of request id => executions
-- KEYS[3] = the first replies, a hash of request id => count
-- ARGV[1] = the request's id (the test's own, not the call id)
local count = redis.call('INCR', KEYS[1])
redis.call('HINCRBY', KEYS[2], ARGV[1], 1)
redis.call('HSETNX', KEYS[3], ARGV[1], count)
return count
