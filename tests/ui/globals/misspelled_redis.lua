-- KEYS[1] = counter
return redsi.call('INCR', KEYS[1])
