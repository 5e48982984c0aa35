const script = `
  local current = redis.call('INCRBY', KEYS[1], ARGV[1])
  if tonumber(current) == tonumber(ARGV[1]) then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
  end
  return current
`;
redis.defineCommand('rateLimit', { numberOfKeys: 1, lua: script });
const dynamic = `return redis.call('GET', '${prefix}')`;
