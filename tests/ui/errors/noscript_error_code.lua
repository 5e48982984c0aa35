-- KEYS[1] = a cache entry
if redis.call('EXISTS', KEYS[1]) == 0 then
  return redis.error_reply('NOSCRIPT the entry is gone')
end
return redis.call('GET', KEYS[1])
