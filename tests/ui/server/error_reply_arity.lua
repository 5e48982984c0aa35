-- ARGV[1] = reason
return redis.error_reply('CONFLICT', ARGV[1])
