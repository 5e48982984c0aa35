-- keys: 1
-- args: 1
-- Withdraw from a balance, refusing overdrafts with an error table.
-- KEYS[1] = balance key
-- ARGV[1] = amount
local amount = tonumber(ARGV[1])
if not amount or amount <= 0 then
  return {err = 'INVALID amount must be a positive number'}
end
local balance = tonumber(redis.call('GET', KEYS[1]) or '0')
if balance < amount then
  return {err = 'INSUFFICIENT balance is ' .. balance}
end
return redis.call('DECRBY', KEYS[1], amount)
