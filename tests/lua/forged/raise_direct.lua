-- Counts its run, then raises the message it is given as an error table.
-- KEYS[1] = a counter of executions
-- ARGV[1] = the error, code first
redis.call('INCR', KEYS[1])
error({err = ARGV[1]})
