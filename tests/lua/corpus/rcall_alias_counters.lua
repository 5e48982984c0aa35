-- keys: 2
-- args: 2
-- Count an event in a total and a per-day hash, through a local alias.
-- KEYS[1] = totals hash
-- KEYS[2] = per-day hash
-- ARGV[1] = event name
-- ARGV[2] = increment
local rcall = redis.call
local by = tonumber(ARGV[2]) or 1
local total = rcall('HINCRBY', KEYS[1], ARGV[1], by)
local today = rcall('HINCRBY', KEYS[2], ARGV[1], by)
rcall('EXPIRE', KEYS[2], 172800)
return {total, today}
