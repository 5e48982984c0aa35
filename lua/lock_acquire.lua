-- Acquire a lock with a fencing token.
--
-- KEYS[1] = lock key, holds the owner's token while the lock is held
-- KEYS[2] = fencing counter key (same {hash tag}); never expires
-- ARGV[1] = owner token, random and unique per acquisition
-- ARGV[2] = lock time to live in milliseconds (> 0)
--
-- Invariant: at most one owner holds the lock at a time, and every
-- successful acquisition gets a fencing token strictly greater than all
-- tokens handed out before it for this lock.
--
-- Returns {'ACQUIRED', fencing} or {'BUSY', ttl_ms} (the holder's remaining
-- time to live, -1 if the lock key has no expiry).
-- Retry safety: safe to retry with the same owner token: when the token
-- already holds the lock, its TTL is renewed and the fencing token it was
-- given is returned again (nobody else can have acquired in between).
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return {'ACQUIRED', redis.call('INCR', KEYS[2])}
end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  -- The counter only goes missing if someone deleted it; start it again.
  local fencing = tonumber(redis.call('GET', KEYS[2])) or redis.call('INCR', KEYS[2])
  return {'ACQUIRED', fencing}
end
return {'BUSY', redis.call('PTTL', KEYS[1])}
