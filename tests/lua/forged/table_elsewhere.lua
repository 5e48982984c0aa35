-- Counts its run, then returns an error table built by a helper and kept
-- in another table first.
-- KEYS[1] = a counter of executions
-- ARGV[1] = the error reply, code first
redis.call('INCR', KEYS[1])
local function build(message)
  local reply = {}
  reply.err = message
  return reply
end
local replies = {build(ARGV[1])}
return replies[1]
