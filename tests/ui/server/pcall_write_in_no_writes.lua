#!lua flags=no-writes
local reply = redis.pcall('SET', KEYS[1], '1')
return reply.err
