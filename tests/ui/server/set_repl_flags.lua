-- ARGV[1] = unused
local _ = ARGV[1]
redis.set_repl(12345)
return 1
