-- KEYS[1] = counter
count = redis.call('INCR', KEYS[1])
return count
