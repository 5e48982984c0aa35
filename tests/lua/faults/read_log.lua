-- Reads how many times a call id ran, without writing.
-- KEYS[1] = the execution log, a hash of call id => executions
-- ARGV[1] = the call id
return redis.call('HGET', KEYS[1], ARGV[1])
