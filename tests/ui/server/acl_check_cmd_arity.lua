-- ARGV[1] = unused
local _ = ARGV[1]
return redis.acl_check_cmd()
