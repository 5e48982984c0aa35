-- keys: 2
-- args: 3
-- Reads arguments through named index constants.
-- KEYS[1] = source hash
-- KEYS[2] = destination hash
-- ARGV[1] = field
-- ARGV[2] = default value
-- ARGV[3] = ttl in seconds
local FIELD = 1
local DEFAULT = FIELD + 1
local SOURCE, DESTINATION = 1, 2
local value = redis.call('HGET', KEYS[SOURCE], ARGV[FIELD]) or ARGV[DEFAULT]
redis.call('HSET', KEYS[DESTINATION], ARGV[FIELD], value)
redis.call('EXPIRE', KEYS[DESTINATION], ARGV[DEFAULT + 1])
return value
