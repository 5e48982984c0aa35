const prefix = process.env.PREFIX;
const script = "local v = redis.call('GET', '" + prefix + "' .. KEYS[1])\nreturn v";
const other = `return redis.call('GET', '${prefix}')`;
