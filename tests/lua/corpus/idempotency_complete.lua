-- keys: 1
-- args: 3
-- Record the result of a claimed request.
-- KEYS[1] = idempotency key
-- ARGV[1] = request fingerprint
-- ARGV[2] = result payload
-- ARGV[3] = retention in seconds
local raw = redis.call('GET', KEYS[1])
if not raw then
  return redis.error_reply('NOCLAIM nothing to complete')
end
local record = cjson.decode(raw)
if record.fp ~= ARGV[1] then
  return redis.error_reply('MISMATCH fingerprint differs')
end
record.state = 'done'
record.result = ARGV[2]
redis.call('SET', KEYS[1], cjson.encode(record), 'EX', ARGV[3])
return redis.status_reply('OK')
