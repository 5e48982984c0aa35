-- Counts a visit: the script of the restricted-user tests, used nowhere
-- else, so that what the process learns about loading it stays theirs.
-- KEYS[1] = the visit counter
-- Returns the count, this visit included.
return redis.call('INCR', KEYS[1])
