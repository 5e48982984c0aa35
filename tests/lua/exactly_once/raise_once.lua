-- Writes, then raises: a raised error records nothing.
-- KEYS[1] = a counter of executions
redis.call('INCR', KEYS[1])

error('boom')
