-- Counts its run, then raises again the error table a coroutine raised
-- and `coroutine.resume` caught.
-- KEYS[1] = a counter of executions
-- ARGV[1] = the error, code first
redis.call('INCR', KEYS[1])
local ok, caught = coroutine.resume(coroutine.create(function()
  error({err = ARGV[1]})
end))
error(caught)
