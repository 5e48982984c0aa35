#!lua name=limits
redis.register_function('limit', 'limit_callback')
