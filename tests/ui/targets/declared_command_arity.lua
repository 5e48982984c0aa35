return redis.call('ACME.PUT', KEYS[1])
