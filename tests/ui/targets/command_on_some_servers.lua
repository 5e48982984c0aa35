-- KEYS[1] = session hash
-- Reads the session's user and extends its fields' time to live.
return redis.call('HGETEX', KEYS[1], 'EX', 1800, 'FIELDS', 1, 'user')
