-- Counts its run, catches an error table with `xpcall` (which hands the
-- table back) and raises it again.
-- KEYS[1] = a counter of executions
-- ARGV[1] = the error, code first
redis.call('INCR', KEYS[1])
local ok, caught = xpcall(function()
  error({err = ARGV[1]})
end, function(raised)
  return raised
end)
error(caught)
