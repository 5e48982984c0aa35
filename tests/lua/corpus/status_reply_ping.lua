#!lua flags=no-writes
-- keys: 1
-- args: 0
-- Health check: report whether a heartbeat key exists.
-- KEYS[1] = heartbeat key
if redis.call('EXISTS', KEYS[1]) == 1 then
  return {ok = 'ALIVE'}
end
return redis.status_reply('MISSING')
