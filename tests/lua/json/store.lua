-- Stores a JSON document as sent.
--
-- KEYS[1] = where to store it
-- ARGV[1] = the document, JSON
redis.call('SET', KEYS[1], ARGV[1])
return 1
