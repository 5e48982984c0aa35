-- keys: 1
-- args: 2
-- Keep a player's best score and return their rank (0-based, best first).
-- KEYS[1] = leaderboard sorted set
-- ARGV[1] = player
-- ARGV[2] = score
redis.call('ZADD', KEYS[1], 'GT', ARGV[2], ARGV[1])
local rank = redis.call('ZREVRANK', KEYS[1], ARGV[1])
local best = redis.call('ZSCORE', KEYS[1], ARGV[1])
return {rank, best}
