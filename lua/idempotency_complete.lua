-- Store the response of a claimed request so duplicates replay it.
--
-- KEYS[1] = idempotency record written by idempotency_claim.lua
-- ARGV[1] = claimant token given to idempotency_claim.lua
-- ARGV[2] = response status (an integer, e.g. an HTTP status)
-- ARGV[3] = response body
-- ARGV[4] = how long duplicates replay the response, in milliseconds (> 0)
--
-- Invariant: only the claimant completes, and only while its claim is
-- live; a stored response is never replaced.
--
-- Returns 'OK'. Errors:
--   NOT_CLAIMED          no record: the claim's lease ran out (or it never
--                        existed), so a duplicate may run the side effect
--   NOT_OWNER            another claimant holds (or completed) the record
-- Retry safety: safe to retry with the same claimant token: completing an
-- already completed record of the same claimant answers 'OK' again and
-- keeps the first response.
local record = redis.call('HMGET', KEYS[1], 'state', 'owner')
local state, owner = record[1], record[2]
if not state then
  return redis.error_reply('NOT_CLAIMED the claim expired or never existed')
end
if owner ~= ARGV[1] then
  return redis.error_reply('NOT_OWNER the record belongs to another claimant')
end
if state == 'done' then
  return redis.status_reply('OK')
end
redis.call('HSET', KEYS[1], 'state', 'done', 'status', ARGV[2], 'body', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return redis.status_reply('OK')
