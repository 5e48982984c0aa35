-- keys: 1
-- args: 3
-- Append an event to a stream, trimming it to roughly N entries.
-- KEYS[1] = stream
-- ARGV[1] = max length
-- ARGV[2] = event type
-- ARGV[3] = payload
return redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'type', ARGV[2], 'payload', ARGV[3])
