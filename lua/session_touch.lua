-- Touch a session: refresh the session hash and the user's session index
-- together, in one atomic script.
--
-- KEYS[1] = the session hash, `session:{<user>}:<session id>`
-- KEYS[2] = the user's session index, `user-sessions:{<user>}` (a sorted
--           set: member = session id, score = the session's expiry time in
--           ms since the epoch)
-- ARGV[1] = the session id (the last `:`-separated part of KEYS[1])
-- ARGV[2] = time to live in milliseconds (a positive integer)
-- ARGV[3] = the client touching the session (stored in the hash)
--
-- Both keys carry the user in a {hash tag}, so they share one Cluster slot.
--
-- Invariant: after every touch, the session hash and its index entry agree:
-- PEXPIRETIME of the hash = its score in the index, and the index expires
-- with its longest-lived session; index entries of sessions that expired
-- are pruned on the next touch. No reader ever sees one updated without
-- the other.
--
-- The hash holds `created_ms` (first touch), `last_seen_ms`, `client` and
-- `touches` (how many touches it received). Expiry times come from the
-- server's clock (`redis.call('TIME')`, allowed in Redis 7, which replicates
-- scripts by their effects), the same clock that expires the keys.
--
-- Returns {touches, live sessions of the user, expires_at_ms}. Raises
-- `INVALID ...` on a bad ttl or a session id that does not end KEYS[1].
--
-- Retry safety: safe for the keys' state (a repeated touch only pushes the
-- expiry further), but `touches` counts the repetition.
local session_id = ARGV[1]
local ttl_ms = tonumber(ARGV[2])
if not ttl_ms or ttl_ms < 1 then
  return redis.error_reply('INVALID ttl_ms must be a positive integer')
end
if session_id == '' or string.sub(KEYS[1], -(#session_id + 1)) ~= ':' .. session_id then
  return redis.error_reply('INVALID the session key must end with :<session id>')
end

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local expires_at = now + ttl_ms

redis.call('HSETNX', KEYS[1], 'created_ms', now)
redis.call('HSET', KEYS[1], 'last_seen_ms', now, 'client', ARGV[3])
local touches = redis.call('HINCRBY', KEYS[1], 'touches', 1)
redis.call('PEXPIREAT', KEYS[1], expires_at)

-- Forget sessions that have expired (a key lives while now <= its expiry).
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. now)
redis.call('ZADD', KEYS[2], expires_at, session_id)
local longest = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', KEYS[2], longest[2])
local sessions = redis.call('ZCARD', KEYS[2])

return {touches, sessions, expires_at}
