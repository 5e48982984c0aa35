-- keys: 2
-- args: 0
-- Move the oldest pending job to the processing list (same hash tag).
-- KEYS[1] = pending list, e.g. jobs:{q1}:pending
-- KEYS[2] = processing list, e.g. jobs:{q1}:processing
local job = redis.call('LMOVE', KEYS[1], KEYS[2], 'RIGHT', 'LEFT')
if not job then
  return nil
end
return job
