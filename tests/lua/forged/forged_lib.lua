#!lua name=forged_lib
-- A library whose functions count their run, then end with the message
-- they are given: returned as an error reply built with a bracketed key,
-- or raised through a C function.
redis.register_function('forge_reply', function(keys, args)
  redis.call('INCR', keys[1])
  return {['err'] = args[1]}
end)
redis.register_function('forge_raise', function(keys, args)
  redis.call('INCR', keys[1])
  table.sort({1, {err = args[1]}}, error)
  return 0
end)
