--[[
  Pops the next job.

  Input:
    KEYS[1] wait list
]]
--- @include "includes/pushAndCount"
--- @include "includes/missing"
return redis.call('RPOP', KEYS[1])
