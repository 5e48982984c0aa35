-- Release a lock only if the caller still owns it.
--
-- KEYS[1] = lock key
-- ARGV[1] = owner token the lock was acquired with
--
-- Invariant: only the owner releases; a lock that expired and was taken by
-- someone else is left alone. Returns 1 when released, 0 otherwise.
-- Retry safety: safe to retry (a second release finds no lock and returns 0).
--
-- One command does the same, with the same replies: on Valkey 9.0 and later
-- `DELIFEQ <lock key> <owner token>`, on Redis 8.4 and later
-- `DELEX <lock key> IFEQ <owner token>` (the checker says so under such a
-- target, finding `single_command`).
--
-- Used by: Lock::release and Redlock (examples/src/workflows/lock.rs,
-- redlock.rs), with lock_acquire.lua and lock_extend.lua.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
