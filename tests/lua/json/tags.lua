-- Returns the tags of a job sent as JSON, as a JSON list: an empty list
-- is encoded as {} by cjson, which `Json<Vec<String>>` reads as [].
--
-- ARGV[1] = the job, JSON
local job = cjson.decode(ARGV[1])
return cjson.encode(job.tags)
