#!lua name=forged_lib
-- A library whose function counts its run, then returns the message it is
-- given as an error reply built with a bracketed key.
redis.register_function('forge_reply', function(keys, args)
  redis.call('INCR', keys[1])
  return {['err'] = args[1]}
end)
