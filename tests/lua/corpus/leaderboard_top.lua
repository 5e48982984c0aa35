#!lua flags=no-writes
-- keys: 1
-- args: 1
-- The top N players with their scores.
-- KEYS[1] = leaderboard sorted set
-- ARGV[1] = how many
local n = tonumber(ARGV[1])
local rows = redis.call('ZREVRANGE', KEYS[1], 0, n - 1, 'WITHSCORES')
local result = {}
for i = 1, #rows, 2 do
  result[#result + 1] = rows[i] .. '=' .. rows[i + 1]
end
return result
