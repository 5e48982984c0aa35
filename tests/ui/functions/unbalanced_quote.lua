#!lua name="limits
redis.register_function('limit', function() return 1 end)
