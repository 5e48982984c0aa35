return redis.call('ACME.MGET', KEYS[1], 'acme:' .. ARGV[1])
