#!lua name=command_at_load_time
local default_limit = tonumber(redis.call('GET', 'quota:default'))
redis.register_function('limit', function() return default_limit end)
