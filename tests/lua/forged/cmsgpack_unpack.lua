-- Counts its run, then returns an error table decoded from MessagePack.
-- KEYS[1] = a counter of executions
-- ARGV[1] = the error reply, code first
redis.call('INCR', KEYS[1])
return cmsgpack.unpack(cmsgpack.pack({err = ARGV[1]}))
