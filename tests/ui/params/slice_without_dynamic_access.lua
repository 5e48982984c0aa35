-- KEYS[1] = first key
return redis.call('DEL', KEYS[1])
