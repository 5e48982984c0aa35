redis.call('SELECT', -1)
return 1
