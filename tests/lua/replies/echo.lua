-- Replies with the JSON document given, converted to Lua and back: any
-- shape, invisible to the compile-time checks, for testing decode errors.
-- ARGV[1] = a JSON document
return cjson.decode(ARGV[1])
