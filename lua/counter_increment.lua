-- Increment a counter: the Lua side of the WATCH/MULTI/EXEC comparison.
--
-- KEYS[1] = the counter (a string holding an integer; missing = 0)
-- ARGV[1] = the amount to add (an integer, may be negative)
--
-- Invariant: every call adds exactly its amount exactly once; N concurrent
-- calls of +1 raise the counter by exactly N, with no retry loop (the script
-- runs atomically, so there is no read-modify-write race to lose).
--
-- Returns the counter's new value. Raises `INVALID ...` on an amount that
-- is not an integer.
--
-- Retry safety: not idempotent. After a connection error that may have
-- reached the server, calling again may add the amount twice; declare it
-- `exactly_once` to make a re-sent call harmless.
local amount = tonumber(ARGV[1])
if not amount or amount ~= math.floor(amount) then
  return redis.error_reply('INVALID amount must be an integer')
end
return redis.call('INCRBY', KEYS[1], amount)
