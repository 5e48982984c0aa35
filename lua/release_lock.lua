-- Release a lock only if the caller still owns it.
--
-- KEYS[1] = lock key
-- ARGV[1] = owner token the lock was acquired with
--
-- Invariant: only the owner releases; a lock that expired and was taken by
-- someone else is left alone. Returns 1 when released, 0 otherwise.
-- Retry safety: safe to retry (a second release finds no lock and returns 0).
--
-- On Valkey 9.0 and later one command does the same, with the same replies:
-- `DELIFEQ <lock key> <owner token>` (the checker says so under a Valkey 9
-- target, finding `single_command`).
--
-- Used by: Lock::release and Redlock (examples/src/workflows/lock.rs,
-- redlock.rs), with lock_acquire.lua and lock_extend.lua.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
