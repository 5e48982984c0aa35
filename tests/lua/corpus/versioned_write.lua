-- keys: 1
-- args: 2
-- Optimistic concurrency: write a JSON document if the expected version matches.
-- KEYS[1] = document key
-- ARGV[1] = expected version (0 for a new document)
-- ARGV[2] = new document body as JSON
local expected = tonumber(ARGV[1])
local current = 0
local raw = redis.call('GET', KEYS[1])
if raw then
  local ok, doc = pcall(cjson.decode, raw)
  if not ok then
    return redis.error_reply('CORRUPT stored document is not JSON')
  end
  current = tonumber(doc.version) or 0
end
if current ~= expected then
  return {'CONFLICT', current}
end
local body = cjson.decode(ARGV[2])
body.version = current + 1
redis.call('SET', KEYS[1], cjson.encode(body))
return {'WRITTEN', body.version}
