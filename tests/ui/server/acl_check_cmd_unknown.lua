-- ARGV[1] = value
return redis.acl_check_cmd('SETT', 'k', ARGV[1])
