-- clock_digits.lua: reads the server's clock into us, in µs as micros()
-- has it (clock.lua), but as a string of digits: tonumber, which micros()
-- calls twice, costs the server more than the TIME command. Pasted where a
-- fast path reads the clock ("-- inline fragment/clock_digits.lua"); reads
-- the local us. Defines nothing.
local t = redis.call('time')
us = t[1] .. string.sub('00000' .. t[2], -6)
