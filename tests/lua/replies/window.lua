-- Positional replies: trailing values cut by nil holes, Lua booleans.
-- ARGV[1] = which reply to send
-- The nil hole is the point: it tests how a reply is cut.
-- redis-script: allow(reply_hole)
local case = ARGV[1]
if case == 'full' then
  return {5, 'w', true, 'n', 9}
elseif case == 'false_flag' then
  return {5, 'w', false}
elseif case == 'nil_hole' then
  return {5, 'w', true, nil, 9}
end
return {5, 'w', true, false, 9}
