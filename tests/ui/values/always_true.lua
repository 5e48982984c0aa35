-- KEYS[1] = members, ARGV[1] = member
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) then
  return 'member'
end
return 'stranger'
