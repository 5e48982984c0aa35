-- ARGV[1] = unused
local _ = ARGV[1]
redis.setresp()
return 1
