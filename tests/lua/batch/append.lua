-- Appends an item to a list: the script of the cross-slot batch tests.
-- KEYS[1] = the list
-- ARGV[1] = the item
-- Returns the list's length, this item included.
return redis.call('RPUSH', KEYS[1], ARGV[1])
