-- ARGV[1] = value
rawset(redis, 'version', ARGV[1])
return 1
