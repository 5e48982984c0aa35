-- Fixed-window rate limiter: at most `limit` admissions per window.
--
-- KEYS[1] = the window's counter, e.g. `rl:{tenant-7}:api` (a string holding
--           the number of admissions in the current window; it expires
--           with the window)
-- ARGV[1] = limit: admissions per window (a positive integer)
-- ARGV[2] = window length in milliseconds (a positive integer)
--
-- Invariant: between the creation of the counter and its expiry, exactly
-- `min(requests, limit)` requests are answered ALLOWED; every other one is
-- DENIED. The first admission of a window creates the counter (INCR) and
-- starts the window (PEXPIRE) in the same atomic script, so a counter never
-- outlives its window and no crash between the two can leave it immortal.
--
-- Returns {'ALLOWED', count, remaining} (count = admissions so far in this
-- window, this one included) or {'DENIED', count, retry_after_ms} (count =
-- admissions in this window, i.e. the limit; retry_after_ms = time until the
-- window ends). Raises `INVALID ...` on a limit or window that is not a
-- positive integer.
--
-- Retry safety: not idempotent. A call repeated after a connection error
-- that may have reached the server can consume one more admission, so the
-- caller may be denied early; it can never admit more than `limit`.
local limit = tonumber(ARGV[1])
local window_ms = tonumber(ARGV[2])
if not limit or limit < 1 or not window_ms or window_ms < 1 then
  return redis.error_reply('INVALID limit and window_ms must be positive integers')
end

local count = tonumber(redis.call('GET', KEYS[1]) or '0')
if count >= limit then
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl < 0 then
    -- A counter without expiry (written by something else): restart its window.
    redis.call('PEXPIRE', KEYS[1], window_ms)
    ttl = window_ms
  end
  return {'DENIED', count, ttl}
end

count = redis.call('INCR', KEYS[1])
if count == 1 or redis.call('PTTL', KEYS[1]) < 0 then
  redis.call('PEXPIRE', KEYS[1], window_ms)
end
return {'ALLOWED', count, limit - count}
