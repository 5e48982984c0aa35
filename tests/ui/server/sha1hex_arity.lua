-- ARGV[1] = text
local _ = ARGV[1]
return redis.sha1hex()
