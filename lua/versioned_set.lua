-- Versioned write (optimistic concurrency): store a JSON document with a
-- version number, only if the stored version is the one the caller read.
--
-- KEYS[1] = document key, a hash with the fields `version` and `doc`
-- ARGV[1] = the new document, JSON text (must decode as JSON)
-- ARGV[2] = expected version: '' to create (nothing may be stored yet),
--           else the version the caller read and based its change on
-- ARGV[3] = time to live in milliseconds, 0 to keep the document forever
--
-- Invariant: a write lands only on the version it was computed from, so
-- each version has exactly one writer and no update is silently lost.
--
-- Returns {'ADDED', 1} for a create, {'UPDATED', version} with the new
-- version for an update. Errors:
--   VERSION_CONFLICT expected <v> found <v>  the stored version moved on
--   NOT_FOUND expected <v>                   an update found nothing stored
--   ALREADY_EXISTS found <v>                 a create found a document
--   INVALID_DOCUMENT <reason>                ARGV[1] is not JSON
-- Retry safety: a write never applies twice. If a call may have run (a
-- connection error after sending), calling again with the same expected
-- version either applies it or fails with VERSION_CONFLICT / ALREADY_EXISTS;
-- re-read the document to learn whether the earlier write was yours.
local ok = pcall(cjson.decode, ARGV[1])
if not ok then
  return redis.error_reply('INVALID_DOCUMENT the document is not valid JSON')
end
local ttl = tonumber(ARGV[3])
if not ttl or ttl < 0 then
  return redis.error_reply('INVALID_DOCUMENT ttl must be a non-negative integer')
end

local found = tonumber(redis.call('HGET', KEYS[1], 'version'))
local version
if ARGV[2] == '' then
  if found then
    return redis.error_reply('ALREADY_EXISTS found ' .. found)
  end
  version = 1
else
  local expected = tonumber(ARGV[2])
  if not found then
    return redis.error_reply('NOT_FOUND expected ' .. ARGV[2])
  end
  if found ~= expected then
    return redis.error_reply('VERSION_CONFLICT expected ' .. ARGV[2] .. ' found ' .. found)
  end
  version = found + 1
end

redis.call('HSET', KEYS[1], 'version', version, 'doc', ARGV[1])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[1], ttl)
else
  redis.call('PERSIST', KEYS[1])
end
if version == 1 then
  return {'ADDED', version}
end
return {'UPDATED', version}
