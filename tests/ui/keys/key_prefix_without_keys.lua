-- ARGV[1] = queue prefix
-- ARGV[2] = job id
return redis.call('DEL', ARGV[1] .. 'job:' .. ARGV[2])
