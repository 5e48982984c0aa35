-- KEYS[1] = window counter, ARGV[1] = window length in milliseconds
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
return {count, ttl, ARGV[1]}
