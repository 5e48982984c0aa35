-- KEYS[1] = profile, ARGV[1] = field
local seen = redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1
redis.call('HSET', KEYS[1], 'seen', seen)
return 1
