#!lua name=visits_lib
-- The library of the restricted-user tests, used nowhere else.
--
-- count_page_visit: counts a visit of a page.
--   keys[1] = the page's visit counter
--   Returns the count, this visit included.

local function count_page_visit(keys, args)
  return redis.call('INCR', keys[1])
end

redis.register_function('count_page_visit', count_page_visit)
