-- KEYS[1] = index of the session keys to expire
for _, session in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  redis.call('EXPIRE', session, 60)
end
return 1
