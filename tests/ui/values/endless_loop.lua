-- KEYS[1] = queue
-- Drains the queue; returns how many jobs it removed.
local removed = 0
while true do
  if redis.call('LPOP', KEYS[1]) then
    removed = removed + 1
  end
end
return removed
