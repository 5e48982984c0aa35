--- @include "trim"
local function pushAndCount(list, counter, job)
  redis.call('LPUSH', list, job)
  trim(list)
  return redis.call('INCRR', counter)
end
