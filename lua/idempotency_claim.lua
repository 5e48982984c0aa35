-- Claim an idempotency key before running a side effect, or learn that it
-- already ran (replay its stored response) or is running (busy).
--
-- KEYS[1] = idempotency record, a hash: state ('running' or 'done'), owner,
--           status, body
-- ARGV[1] = claimant token, random and unique per attempt
-- ARGV[2] = claim lease in milliseconds: if the claimant neither completes
--           nor renews by then, the record expires and the request may run
--           again (> 0)
--
-- Invariant: while a record exists, at most one claimant runs the side
-- effect, and once it completed every duplicate gets the stored response.
--
-- Returns 'CLAIMED' (run the side effect, then idempotency_complete.lua),
-- {'REPLAY', status, body} or {'BUSY', ttl_ms} (another claimant is running
-- it; ask again after ttl_ms at the latest).
-- Retry safety: safe to retry with the same claimant token: a claimant that
-- claims again gets 'CLAIMED' again and its lease is renewed.
local record = redis.call('HMGET', KEYS[1], 'state', 'owner', 'status', 'body')
local state, owner = record[1], record[2]
if not state then
  redis.call('HSET', KEYS[1], 'state', 'running', 'owner', ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 'CLAIMED'
end
if state == 'done' then
  return {'REPLAY', tonumber(record[3]), record[4]}
end
if owner == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 'CLAIMED'
end
return {'BUSY', redis.call('PTTL', KEYS[1])}
