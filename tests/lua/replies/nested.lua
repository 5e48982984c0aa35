-- Nested arrays, a nested tagged reply and binary bytes in one reply.
-- ARGV[1] = the raw bytes to send back
return {
  {1, 2, 3},
  {{1, 2}, {3, 4}},
  {{'a', 1}, {'b', 2}},
  {'ALLOWED', 4},
  ARGV[1],
  {},
}
