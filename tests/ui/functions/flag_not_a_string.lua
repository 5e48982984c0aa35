#!lua name=limits
redis.register_function{
    function_name = 'limit',
    callback = function() return 1 end,
    flags = {true},
}
