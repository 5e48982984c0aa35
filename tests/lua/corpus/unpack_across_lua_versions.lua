-- keys: 1
-- args: 0
-- Count the elements of a list in code shared with newer Lua versions:
-- `table.unpack` is tested first, so it is never called on Lua 5.1.
-- KEYS[1] = list
-- The whole list is read on purpose: the lists it counts are short.
-- redis-script: allow(unbounded_read)
local unpack_all = table.unpack or unpack
local items = redis.call('LRANGE', KEYS[1], 0, -1)
if table.unpack then
  return select('#', table.unpack(items))
end
return #{unpack_all(items)}
