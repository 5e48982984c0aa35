-- ARGV[1] = any value: the text the script receives for it
return ARGV[1]
