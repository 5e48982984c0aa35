-- KEYS[1] = the user's profile hash
return redis.call('HGETALL', KEYS[1]) -- redis-script: allow(unbounded_read)
