-- Replies built with cjson.encode.
-- ARGV[1] = which document to send
local case = ARGV[1]
if case == 'object' then
  return cjson.encode({hits = 3, misses = 1})
elseif case == 'array' then
  return cjson.encode({'ada', {1, 2, 3}})
end
return cjson.encode({})
