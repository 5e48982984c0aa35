const LIMIT = 10;
const bump = `
  local n = redis.call('INCR', KEYS[1])
  if n > ${LIMIT} then return redis.error_reply('LIMIT over the limit') end
  return n
`;
export const Counter = () => <button onClick={() => redis.eval(bump, 1, "counter")}>+</button>;
