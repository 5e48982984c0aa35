#!lua name=unknown_flag
redis.register_function{
  function_name = 'peek',
  flags = {'no-write'},
  callback = function(keys) return redis.call('GET', keys[1]) end,
}
