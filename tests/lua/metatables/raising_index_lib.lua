#!lua name=raising_index_lib
-- The scripts of `raising_index.lua` and `nested_raising_index.lua` as
-- library functions: each counts its runs in keys[1], then returns an
-- error table (alone, or as the second element of an array) whose
-- metatable's `__index` overwrites keys[1] and raises.

-- A metatable whose `__index` writes `key` and raises. Built per call:
-- `setmetatable` and `error` only exist once the library runs.
local function raising(key)
  return {
    __index = function()
      redis.call('SET', key, 'written after the script ended')
      error('boom')
    end,
  }
end

redis.register_function('raising_index', function(keys, args)
  redis.call('INCR', keys[1])
  return setmetatable({err = 'BOOM the script returned this error'}, raising(keys[1]))
end)

redis.register_function('nested_raising_index', function(keys, args)
  local runs = redis.call('INCR', keys[1])
  return {runs, setmetatable({err = 'BOOM a nested error'}, raising(keys[1]))}
end)
