-- Read a document written by versioned_set.lua, with its version.
--
-- KEYS[1] = document key, a hash with the fields `version` and `doc`
--
-- Invariant: the version and the document are read together, so the
-- version always belongs to the document returned.
-- Returns {version, doc} or nil when nothing is stored.
-- Retry safety: read-only, always safe to retry.
local stored = redis.call('HMGET', KEYS[1], 'version', 'doc')
if not stored[1] then
  return nil
end
return {tonumber(stored[1]), stored[2]}
