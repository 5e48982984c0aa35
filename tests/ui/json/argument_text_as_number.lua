-- KEYS[1] = the job's score, ARGV[1] = the job, as JSON
return redis.call('INCRBY', KEYS[1], tonumber(ARGV[1]) or 0)
