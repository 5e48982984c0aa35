-- KEYS[1] = source list, KEYS[2] = destination list, ARGV[1] = how many to move
local moved = 0
for i = 1, tonumber(ARGV[1]) do
  if not redis.call('LMOVE', KEYS[1], KEYS[2], 'LEFT', 'RIGHT') then break end
  moved = moved + 1
end
return moved
