#!lua name=downloads_lib
-- The library of the restricted-batch test, used nowhere else.
--
-- count_file_download: counts a download of a file.
--   keys[1] = the file's download counter
--   Returns the count, this download included.

local function count_file_download(keys, args)
  return redis.call('INCR', keys[1])
end

redis.register_function('count_file_download', count_file_download)
