-- Counts its run, then returns as it is the error table a function raised
-- and `xpcall` caught (unlike `pcall`, it hands the table back).
-- KEYS[1] = a counter of executions
-- ARGV[1] = the error reply, code first
redis.call('INCR', KEYS[1])
local ok, caught = xpcall(function()
  error({err = ARGV[1]})
end, function(raised)
  return raised
end)
return caught
