-- ARGV[1] = message
redis.log(ARGV[1])
return 1
