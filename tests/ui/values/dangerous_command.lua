-- KEYS[1] = ranking
-- Returns the ranking ordered by each member's weight key.
return redis.call('SORT', KEYS[1], 'BY', 'weight_*', 'LIMIT', 0, 10)
