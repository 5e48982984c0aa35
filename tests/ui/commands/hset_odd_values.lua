-- KEYS[1] = user profile
-- ARGV[1] = display name
-- ARGV[2] = email
redis.call('HSET', KEYS[1], 'name', ARGV[1], 'email')
return 1
