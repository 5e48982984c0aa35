-- Counts its run, then raises an error table through a C function:
-- `table.sort` calls `error` as its comparison, and the server's own
-- suffix then names no line of the script (`on =[C]:-1`).
-- KEYS[1] = a counter of executions
-- ARGV[1] = the error, code first
redis.call('INCR', KEYS[1])
table.sort({1, {err = ARGV[1]}}, error)
return 0
