-- ARGV[1] = message
redis.log('warning', ARGV[1])
return 1
