-- KEYS[1] = hash
-- ARGV[1] = field
-- ARGV[2] = seconds until the field expires
return redis.call('HEXPIRE', KEYS[1], ARGV[2], 'FIELDS', 1, ARGV[1])
