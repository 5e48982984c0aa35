--[[
  Pushes a job and counts it.

  Input:
    KEYS[1] wait list
    KEYS[2] counter
    ARGV[1] job id
]]
--- @include "includes/pushAndCount"
return pushAndCount(KEYS[1], KEYS[2], ARGV[1])
