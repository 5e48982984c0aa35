#!lua name=limits name=quotas
redis.register_function('limit', function() return 1 end)
