-- Appends a call's id to an order log: the flush-storm test compares what
-- ran, in order, with what every call was told.
-- KEYS[1] = the order log, a list of call ids
-- ARGV[1] = the call's id
return redis.call('RPUSH', KEYS[1], ARGV[1])
