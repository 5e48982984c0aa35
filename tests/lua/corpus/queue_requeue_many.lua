-- keys: 1+
-- args: 1
-- Move up to ARGV[1] jobs from each source list back to the target list.
-- KEYS[1] = target list
-- KEYS[2..] = source lists, all with the same {hash tag}
local per_source = tonumber(ARGV[1])
local moved = 0
for i = 2, #KEYS do
  for _ = 1, per_source do
    local job = redis.call('RPOPLPUSH', KEYS[i], KEYS[1])
    if not job then
      break
    end
    moved = moved + 1
  end
end
return moved
