-- Counts its run, then hands back what a protected call caught. Redis's
-- `pcall` turns a caught error table into its message: this returns a
-- plain string, never an error reply.
-- KEYS[1] = a counter of executions
-- ARGV[1] = the message of the error raised
redis.call('INCR', KEYS[1])
return select(2, pcall(error, {err = ARGV[1]}))
