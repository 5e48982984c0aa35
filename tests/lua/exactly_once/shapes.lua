-- Every reply shape the typed replies decode, chosen by ARGV[1], for the
-- replay-fidelity tests: an exactly-once call sent again must get the very
-- reply the first execution gave.
-- KEYS[1] = a counter of executions
-- ARGV[1] = which reply to send
-- ARGV[2] = bytes to send back (binary-safe)
--
-- The fractions and nil holes are the point: they test what Redis makes
-- of them.
-- redis-script: allow(fractional_reply, reply_hole)
local count = redis.call('INCR', KEYS[1])
local case = ARGV[1]
if case == 'integer' then
  return 42
elseif case == 'negative' then
  return -7
elseif case == 'float' then
  return 3.99
elseif case == 'big' then
  return 9007199254740993
elseif case == 'string' then
  return 'plain text'
elseif case == 'empty_string' then
  return ''
elseif case == 'bytes' then
  return ARGV[2]
elseif case == 'true' then
  return true
elseif case == 'false' then
  return false
elseif case == 'nil' then
  return nil
elseif case == 'bare' then
  return
elseif case == 'empty_table' then
  return {}
elseif case == 'status' then
  return redis.status_reply('DONE')
elseif case == 'ok' then
  return redis.status_reply('OK')
elseif case == 'ok_table' then
  return {ok = 'QUEUED'}
elseif case == 'error' then
  return redis.error_reply('CONFLICT expected 3 found 4')
elseif case == 'error_table' then
  return {err = 'FROZEN account 7 is frozen'}
elseif case == 'allowed' then
  return {'ALLOWED', count}
elseif case == 'denied' then
  return {'DENIED', 3, 1500}
elseif case == 'nil_hole' then
  return {5, 'w', true, nil, 9}
elseif case == 'false_hole' then
  return {5, 'w', true, false, 9}
elseif case == 'nested' then
  return {{1, 2, 3}, {{1, 2}, {3, 4}}, {{'a', 1}, {'b', 2}}, {'ALLOWED', 4}, ARGV[2], {}}
elseif case == 'deep_holes' then
  return {1, {2, nil, 4}, {{}, {false, 'x'}}, nil, 5}
elseif case == 'json' then
  return cjson.encode({hits = 3, misses = 1})
elseif case == 'map' then
  return {map = {hits = 3, misses = 1}}
elseif case == 'double' then
  return {double = 3.5}
end
return count
