-- KEYS[1] = hash
local fields = redis.call('HKEYS', KEYS[1])
table.sort(fields, function(a, b) return a > b)
return fields
