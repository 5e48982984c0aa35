-- KEYS[1] = job counter
-- ARGV[1..] = queue prefixes
redis.call('INCR', KEYS[1])
for i = 1, #ARGV do
  redis.call('DEL', ARGV[i])
end
return 1
