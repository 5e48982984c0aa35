-- append_id.lua with another body (so another SHA1): a second script in
-- the flush-storm test's pipelines.
-- KEYS[1] = the order log, a list of call ids
-- ARGV[1] = the call's id
local length = redis.call('RPUSH', KEYS[1], ARGV[1])
return length
