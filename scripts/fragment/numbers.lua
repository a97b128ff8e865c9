-- numbers.lua: the times of inputs.lua as numbers, for the fragments that
-- compute with them.
-- Defines now, life and grace (ms).
-- uses fragment/inputs.lua
local now, life, grace = tonumber(now_ms), tonumber(life_ms), tonumber(grace_ms)
