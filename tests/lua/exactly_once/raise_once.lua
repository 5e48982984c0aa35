-- Writes, then raises: the raised error is the call's recorded reply.
-- KEYS[1] = a counter of executions
redis.call('INCR', KEYS[1])

error('boom')
