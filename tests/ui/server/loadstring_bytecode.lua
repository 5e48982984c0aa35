local compiled = string.dump(function() return 1 end)
local load_again = loadstring(compiled)
return load_again()
