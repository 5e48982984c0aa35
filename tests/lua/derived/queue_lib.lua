#!lua name=derived_queue
-- A library whose function builds its keys from its first key.
redis.register_function('push_job', function(keys, args)
  local prefix = keys[1]
  redis.call('HSET', prefix .. 'job:' .. args[1], 'payload', args[2])
  return redis.call('RPUSH', prefix .. 'waiting', args[1])
end)
