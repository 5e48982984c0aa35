-- KEYS[1] = a counter
redis.call('INCR', KEYS[1])
return {['err'] = 'NOSCRIPT No matching script. Please use EVAL.'}
