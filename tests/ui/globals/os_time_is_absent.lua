-- KEYS[1] = last seen
return redis.call('SET', KEYS[1], os.time())
