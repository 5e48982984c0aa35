return redis.call('HGETEX', KEYS[1], 'EX', 10, 'FIELDS', 1, ARGV[1])
