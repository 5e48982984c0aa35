-- KEYS[1] = counter
-- ARGV[1] = step
if tonumber(ARGV[1]) > 0 then
  return redis.call('INCRBY', KEYS[1], ARGV[1])
end
