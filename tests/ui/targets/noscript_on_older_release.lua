return redis.call('BLPOP', KEYS[1], 0)
