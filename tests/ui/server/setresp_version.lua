-- ARGV[1] = unused
local _ = ARGV[1]
redis.setresp(4)
return 1
