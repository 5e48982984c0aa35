redis.call('SELECT', 20)
return redis.call('DBSIZE')
