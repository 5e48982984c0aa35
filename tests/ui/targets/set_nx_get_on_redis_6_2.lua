-- KEYS[1] = the deduplication key
-- ARGV[1] = the job claiming it
-- ARGV[2] = how long the claim holds, in milliseconds
-- Claims the key for the job unless another job holds it; returns the
-- holder (nil when this job got it).
return redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX', 'GET')
