-- Every shape `Decision` decodes, chosen by ARGV[1].
-- KEYS[1] = a counter, incremented by each call
-- ARGV[1] = which reply to send
local count = redis.call('INCR', KEYS[1])
local case = ARGV[1]
if case == 'allowed' then
  return {'ALLOWED', count}
elseif case == 'denied' then
  return {'DENIED', count, count * 100}
elseif case == 'too_many' then
  return {'TOO_MANY', count}
elseif case == 'too_many_hint' then
  return {'TOO_MANY', count, 7}
elseif case == 'busy_string' then
  return 'BUSY'
elseif case == 'busy_status' then
  return redis.status_reply('BUSY')
elseif case == 'busy_table' then
  return {'BUSY'}
end
return redis.status_reply('OK')
