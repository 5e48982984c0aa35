-- KEYS[1] = prefix with a hash tag
-- ARGV[1] = name appended to it
-- ARGV[2] = value
redis.call('SET', KEYS[1] .. ARGV[1], ARGV[2])
return redis.call('GET', KEYS[1] .. ARGV[1])
