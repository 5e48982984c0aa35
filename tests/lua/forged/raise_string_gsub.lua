-- Counts its run, then raises the message itself, a string, through
-- `string.gsub`, which calls `error` with the match.
-- KEYS[1] = a counter of executions
-- ARGV[1] = the error, code first
redis.call('INCR', KEYS[1])
string.gsub(ARGV[1], '.+', error)
return 0
