#!lua flags=no-writes
-- keys: 1
-- args: 0
-- Describe how a key is stored: its encoding and memory usage.
-- KEYS[1] = key to describe
if redis.call('EXISTS', KEYS[1]) == 0 then
  return nil
end
local encoding = redis.call('OBJECT', 'ENCODING', KEYS[1])
local usage = redis.call('MEMORY', 'USAGE', KEYS[1])
return {encoding, usage or 0}
