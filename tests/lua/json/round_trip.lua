-- Counts an attempt of a job sent as JSON and returns it as JSON.
--
-- KEYS[1] = where the job's new state is stored (a string)
-- ARGV[1] = the job, JSON: {"jobId": …, "attempts": …, "note": … or null,
--           "tags": […], "maxAttempts": …}
--
-- Returns the job with one more attempt, every other field as it came
-- (a null note stays null). cjson encodes an empty table as {}, which
-- does not read as a list: an empty `tags` is left out (the Rust side
-- reads a missing `tags` as empty).
local job = cjson.decode(ARGV[1])
local out = {
  jobId = job.jobId,
  attempts = job.attempts + 1,
  note = job.note,
  maxAttempts = job.maxAttempts,
}
if next(job.tags) ~= nil then
  out.tags = job.tags
end
local text = cjson.encode(out)
redis.call('SET', KEYS[1], text)
return text
