-- ARGV[1] = unused
local _ = ARGV[1]
-- Probes for a global some servers define.
local has_bit = pcall(function() return bit32.band(1, 1) end)
return has_bit and 1 or 0
