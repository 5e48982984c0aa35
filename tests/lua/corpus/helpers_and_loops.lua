-- keys: 1
-- args: 1
-- Split a CSV of scores, keep the valid ones, store their running maximum.
-- KEYS[1] = maximum key
-- ARGV[1] = comma-separated scores
local function split(text, separator)
  local parts = {}
  local start = 1
  repeat
    local stop = string.find(text, separator, start, true)
    local piece = string.sub(text, start, (stop or 0) - 1)
    if stop == nil then
      piece = string.sub(text, start)
    end
    parts[#parts + 1] = piece
    start = (stop or #text) + 1
  until stop == nil
  return parts
end

local function max_of(values, index, best)
  if index > #values then
    return best
  end
  local value = tonumber(values[index])
  if value and (best == nil or value > best) then
    best = value
  end
  return max_of(values, index + 1, best)
end

local best = max_of(split(ARGV[1], ','), 1, nil)
if best == nil then
  return nil
end
local stored = tonumber(redis.call('GET', KEYS[1]) or '-1')
if best > stored then
  redis.call('SET', KEYS[1], best)
  return best
end
return stored
