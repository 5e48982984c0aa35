-- Counts a download: the script of the restricted-batch test, used nowhere
-- else, so that what the process learns about loading it stays its own.
-- KEYS[1] = the download counter
-- Returns the count, this download included.
return redis.call('INCR', KEYS[1])
