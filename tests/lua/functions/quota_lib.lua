#!lua name=quota_lib
-- Fixed-window quotas as a Redis Functions library (FUNCTION LOAD, FCALL).
--
-- fixed_window_allow: counts one request against a window's quota.
--   keys[1] = the window's counter, e.g. `quota:{tenant-7}:api` (a string
--             holding the requests counted in the current window; it
--             expires with the window)
--   args[1] = limit: requests admitted per window (a positive integer)
--   args[2] = window length in seconds (a positive integer)
--   Returns {'ALLOWED', count} while count <= limit, {'DENIED', count}
--   after (count = requests in this window, this one included). Returns
--   `INVALID ...` on a limit or window that is not a positive integer.
--   The first request of a window creates the counter (INCR) and starts
--   the window (EXPIRE) in the same atomic call, so a counter never
--   outlives its window.
--   Retry safety: not idempotent; a repeated call counts once more.
--
-- quota_peek (flags: no-writes, so FCALL_RO, allowed on replicas): the
--   counts of the windows keys[1..n], 0 for a window that is not open.
--   Safe to retry.
--
-- Used by: tests/integration/functions.rs (the workflow version is lua/quota_lib.lua).

local function fixed_window_allow(keys, args)
  local limit = tonumber(args[1])
  local window = tonumber(args[2])
  if not limit or limit < 1 or not window or window < 1 then
    return redis.error_reply('INVALID limit and window must be positive integers')
  end
  local count = redis.call('INCR', keys[1])
  if count == 1 then
    redis.call('EXPIRE', keys[1], window)
  end
  if count > limit then
    return {'DENIED', count}
  end
  return {'ALLOWED', count}
end

local function quota_peek(keys, args)
  local counts = {}
  for index, key in ipairs(keys) do
    counts[index] = tonumber(redis.call('GET', key) or '0')
  end
  return counts
end

redis.register_function('fixed_window_allow', fixed_window_allow)
redis.register_function{
  function_name = 'quota_peek',
  callback = quota_peek,
  flags = {'no-writes'},
}
