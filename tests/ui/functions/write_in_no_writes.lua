#!lua name=write_in_no_writes
redis.register_function{
  function_name = 'reset',
  flags = {'no-writes'},
  callback = function(keys) return redis.call('DEL', keys[1]) end,
}
