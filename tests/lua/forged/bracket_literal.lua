-- Counts its run, then returns the message it is given as an error reply
-- built with a bracketed literal key.
-- KEYS[1] = a counter of executions
-- ARGV[1] = the error reply, code first
redis.call('INCR', KEYS[1])
return {['err'] = ARGV[1]}
