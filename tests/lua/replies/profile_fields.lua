-- Every field of a profile.
--
-- KEYS[1] = the profile's hash
return redis.call('HGETALL', KEYS[1]) -- redis-script: allow(unbounded_read)
