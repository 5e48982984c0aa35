#!lua name=quota_lib
-- Fixed-window quotas as a function library: loaded once with FUNCTION
-- LOAD (or a call loads it where a server lacks it), called by name with
-- FCALL, kept by the server across restarts and replicated with the data.
--
-- fixed_window_allow(keys, args): admits at most `limit` requests per window.
--   keys[1] = the window's counter, e.g. `quota:{tenant-7}:api` (a string
--             holding the admissions of the current window; it expires with
--             the window)
--   args[1] = limit: admissions per window (a positive integer)
--   args[2] = window length in milliseconds (a positive integer)
--   Returns {'ALLOWED', count, remaining} or {'DENIED', count, retry_after_ms};
--   replies `INVALID …` on a limit or window that is not a positive integer.
--   Invariant: between the creation of the counter and its expiry, exactly
--   `min(requests, limit)` requests are ALLOWED. Not idempotent: a call
--   repeated after an error that may have reached the server consumes one
--   more admission (it can never admit more than `limit`).
--
-- quota_peek(keys): the admissions of the current window (nil before the
--   first), without counting one; `no-writes`, so it runs with FCALL_RO and
--   may run on replicas.
--   keys[1] = the window's counter

local function fixed_window_allow(keys, args)
  local limit = tonumber(args[1])
  local window_ms = tonumber(args[2])
  if not limit or limit < 1 or not window_ms or window_ms < 1 then
    return redis.error_reply('INVALID limit and window_ms must be positive integers')
  end
  local count = tonumber(redis.call('GET', keys[1]) or '0')
  if count >= limit then
    local ttl = redis.call('PTTL', keys[1])
    if ttl < 0 then
      -- A counter without expiry (written by something else): restart its window.
      redis.call('PEXPIRE', keys[1], window_ms)
      ttl = window_ms
    end
    return {'DENIED', count, ttl}
  end
  count = redis.call('INCR', keys[1])
  if count == 1 or redis.call('PTTL', keys[1]) < 0 then
    redis.call('PEXPIRE', keys[1], window_ms)
  end
  return {'ALLOWED', count, limit - count}
end

redis.register_function('fixed_window_allow', fixed_window_allow)

redis.register_function{
  function_name = 'quota_peek',
  description = 'Admissions of the current window, without counting one.',
  callback = function(keys)
    return tonumber(redis.call('GET', keys[1]))
  end,
  flags = {'no-writes'},
}
