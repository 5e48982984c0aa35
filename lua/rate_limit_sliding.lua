-- Sliding-window rate limiter (sorted-set log): at most `limit` admissions
-- in any `window_ms` interval.
--
-- KEYS[1] = the limiter's log, e.g. `rl:{tenant-7}:search` (a sorted set:
--           member = request id, score = admission time in ms)
-- ARGV[1] = limit: admissions per window (a positive integer)
-- ARGV[2] = window length in milliseconds (a positive integer)
-- ARGV[3] = request id, unique per request (the caller draws a random one)
--
-- Invariant: for every instant t, at most `limit` requests are admitted
-- with an admission time in (t - window_ms, t]. Admission times are the
-- server clock in whole milliseconds, so in real time the guarantee covers
-- any interval of window_ms - 1 ms (two admissions stamped one window apart
-- may be up to 1 ms closer than that).
--
-- Clock: the script reads the server's clock with `redis.call('TIME')`.
-- Redis 7 replicates scripts by their effects (the ZADD with the computed
-- score), so a non-deterministic TIME before a write is allowed and replicas
-- and the AOF see the same scores. Trade-off: every client of a key shares
-- one clock (the primary holding the key), so skewed application servers
-- cannot over-admit or evict each other's entries; but the caller cannot
-- inject time (tests must really wait), and after a failover the new
-- primary's clock takes over (a skew between the two shifts the window by
-- that much, once). Taking `now_ms` as an ARGV would make the script
-- deterministic at the price of trusting every caller's clock.
--
-- Returns {'ALLOWED', count, remaining} (count = admissions in the window,
-- this one included) or {'DENIED', count, retry_after_ms} (retry_after_ms =
-- time until enough old admissions leave the window). Raises `INVALID ...`
-- on a limit or window that is not a positive integer, or an empty id.
--
-- Retry safety: idempotent per request id while the id is in the window.
-- Calling again with the same id after a connection error that may have
-- reached the server answers ALLOWED without a second admission if the
-- first call was admitted, and decides afresh if it was denied. A new id is
-- a new request.
local limit = tonumber(ARGV[1])
local window_ms = tonumber(ARGV[2])
local id = ARGV[3]
if not limit or limit < 1 or not window_ms or window_ms < 1 or id == '' then
  return redis.error_reply('INVALID limit and window_ms must be positive integers, the id non-empty')
end

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

-- Drop the admissions that left the window: those at or before now - window.
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window_ms)
local count = redis.call('ZCARD', KEYS[1])

if redis.call('ZSCORE', KEYS[1], id) then
  -- A retry of a request that was already admitted.
  return {'ALLOWED', count, math.max(limit - count, 0)}
end

if count >= limit then
  -- The window frees a slot when its (count - limit + 1)-th oldest entry
  -- leaves it, window_ms after that entry's admission.
  local oldest = redis.call('ZRANGE', KEYS[1], count - limit, count - limit, 'WITHSCORES')
  local retry_after_ms = tonumber(oldest[2]) + window_ms - now
  return {'DENIED', count, math.max(retry_after_ms, 1)}
end

redis.call('ZADD', KEYS[1], now, id)
-- The log is useless once its newest entry has left the window.
redis.call('PEXPIRE', KEYS[1], window_ms)
return {'ALLOWED', count + 1, limit - count - 1}
