-- Counts its runs, then returns an error table whose metatable's
-- `__index` writes and raises. A server that reads the table's other
-- fields (`source`, `line`, `ignore_error_stats_update`) through
-- `__index` after the script has ended runs that write outside the
-- script, then dies of the raise: a Lua panic ends the process.
-- KEYS[1] = a counter of the script's runs (what `__index` would overwrite)
redis.call('INCR', KEYS[1])
local raising = {
  __index = function()
    redis.call('SET', KEYS[1], 'written after the script ended')
    error('boom')
  end,
}
return setmetatable({err = 'BOOM the script returned this error'}, raising)
