-- keys: 1
-- args: 0
-- Keep a 32-bit big-endian sequence number as a 4-byte string.
-- KEYS[1] = sequence key
local raw = redis.call('GET', KEYS[1])
local current = 0
if raw and #raw == 4 then
  current = struct.unpack('>I4', raw)
end
local next_value = (current + 1) % 4294967296
redis.call('SET', KEYS[1], struct.pack('>I4', next_value))
return next_value
