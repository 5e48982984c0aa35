-- KEYS[1] = profile, KEYS[2] = settings
return {redis.call('INCR', KEYS[1]), redis.call('GET', KEYS[2])}
