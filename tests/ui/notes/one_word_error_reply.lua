-- KEYS[1] = document
if redis.call('EXISTS', KEYS[1]) == 0 then
  return redis.error_reply('GONE')
end
return redis.call('GET', KEYS[1])
