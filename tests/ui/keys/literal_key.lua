-- KEYS[1] = item, ARGV[1] = score
redis.call('ZADD', 'leaderboard', ARGV[1], KEYS[1])
return 1
