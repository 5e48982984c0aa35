-- Counts its run, then returns as it is the error table a coroutine raised
-- and `coroutine.resume` caught.
-- KEYS[1] = a counter of executions
-- ARGV[1] = the error reply, code first
redis.call('INCR', KEYS[1])
local ok, caught = coroutine.resume(coroutine.create(function()
  error({err = ARGV[1]})
end))
return caught
