-- ARGV[1] = message
redis.log(99, ARGV[1])
return 1
