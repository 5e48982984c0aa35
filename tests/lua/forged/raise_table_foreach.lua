-- Counts its run, then raises an error table through `table.foreach`,
-- which calls `error` with each key.
-- KEYS[1] = a counter of executions
-- ARGV[1] = the error, code first
redis.call('INCR', KEYS[1])
table.foreach({[{err = ARGV[1]}] = 1}, error)
return 0
