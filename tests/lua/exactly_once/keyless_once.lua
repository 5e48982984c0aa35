-- Counts calls without keys of its own: its record alone routes it. On a
-- cluster, give it a call id with the hash tag `{keyless}`, so that the
-- record and the counter share a slot.
-- ARGV[1], ARGV[2] = anything; sent back after the key and argument
-- counts the script sees
redis.call('INCR', '{keyless}:counter')
return {#KEYS, #ARGV, unpack(ARGV)}
