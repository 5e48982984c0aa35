-- Asks the caller to come back later when the queue is busy.
-- KEYS[1] = the queue
local length = redis.call('LPUSH', KEYS[1], 'job')
if length > 100 then
  return redis.error_reply('TRYAGAIN the queue is full')
end
return length
