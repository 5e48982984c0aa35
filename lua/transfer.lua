-- Move an amount between two counters atomically.
--
-- KEYS[1] = source counter
-- KEYS[2] = destination counter
-- ARGV[1] = amount (a positive integer)
--
-- Invariant: the sum of both counters never changes, and the source never
-- goes below zero. Returns {source balance, destination balance}, or the
-- error `INSUFFICIENT <balance>` when the source holds less than the amount.
-- Retry safety: not idempotent by itself (sent twice, it moves the amount
-- twice). The transfer workflow declares it `exactly_once`, so a call sent
-- again with the same payment id moves nothing and gets the first reply.
-- Used by: examples/src/workflows/transfer.rs.
local amount = tonumber(ARGV[1])
if not amount or amount <= 0 then
  return redis.error_reply('BADAMOUNT amount must be a positive integer')
end
local balance = tonumber(redis.call('GET', KEYS[1]) or '0')
if balance < amount then
  return redis.error_reply('INSUFFICIENT ' .. balance)
end
local source = redis.call('DECRBY', KEYS[1], amount)
local destination = redis.call('INCRBY', KEYS[2], amount)
return {source, destination}
