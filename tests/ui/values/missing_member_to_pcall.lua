-- ARGV[1] = JSON document
local ok, document = pcall(cjson.decod, ARGV[1])
if not ok then
  return 'invalid'
end
return document.name
