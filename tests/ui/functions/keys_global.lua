#!lua name=keys_global
redis.register_function('peek', function(keys)
  return redis.call('GET', KEYS[1])
end)
