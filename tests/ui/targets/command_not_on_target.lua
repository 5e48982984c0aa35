-- KEYS[1] = session hash, ARGV[1] = field
return redis.call('HEXPIRE', KEYS[1], 60, 'FIELDS', 1, ARGV[1])
