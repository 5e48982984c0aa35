local function trim(list)
  redis.call('LTRIM', list, 0, 999)
end
