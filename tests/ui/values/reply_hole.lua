-- KEYS[1] = first, KEYS[2] = second
return {redis.call('GET', KEYS[1]) or 'none', tonumber(redis.call('GET', KEYS[2])), 5}
