-- KEYS[1] = rule, ARGV[1] = input
local rule = redis.call('GET', KEYS[1]) or 'return true'
local check = loadstring(rule)
return check() and ARGV[1] or false
