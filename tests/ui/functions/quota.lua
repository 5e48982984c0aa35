#!lua name=quota_ui
-- A fixed-window quota as a function library.
redis.register_function('fixed_window_allow', function(keys, args)
  local current = redis.call('INCR', keys[1])
  if current == 1 then redis.call('EXPIRE', keys[1], tonumber(args[2])) end
  if current > tonumber(args[1]) then return {0, current} end
  return {1, current}
end)
redis.register_function{
  function_name = 'quota_peek',
  callback = function(keys) return redis.call('GET', keys[1]) end,
  flags = {'no-writes'},
}
