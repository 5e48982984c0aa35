-- KEYS[1] = counter, ARGV[1] = step
local rcall = redis.call
return rcall('INCRBY', KEYS[1], ARGV[1], 'twice')
