-- Counts its runs, then returns an array whose second element is an
-- error table with a metatable whose `__index` writes and raises: the
-- server reads an error element as it reads an error reply.
-- KEYS[1] = a counter of the script's runs (what `__index` would overwrite)
local runs = redis.call('INCR', KEYS[1])
local raising = {
  __index = function()
    redis.call('SET', KEYS[1], 'written after the script ended')
    error('boom')
  end,
}
return {runs, setmetatable({err = 'BOOM a nested error'}, raising)}
