-- Extend a lock only if the caller still owns it.
--
-- KEYS[1] = lock key
-- ARGV[1] = owner token the lock was acquired with
-- ARGV[2] = new time to live in milliseconds, counted from now (> 0)
--
-- Invariant: only the owner extends; a lock that expired (and maybe was
-- taken by someone else) is left alone.
-- Returns 1 when extended, 0 when the caller does not hold the lock.
-- Retry safety: safe to retry (extending twice sets the same deadline
-- again, counted from the later call).
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
