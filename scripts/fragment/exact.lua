-- exact.lua: a semaphore's count stays an integer that a Lua number holds
-- exactly, at most 2^53 - 1 either way. The scripts do their sums in Lua
-- numbers (doubles): a count beyond would be stored rounded, or as
-- "1.2e+18", which neither latchkey nor Redisson reads as a count. A change
-- that would leave the range is refused before it writes anything, with an
-- error reply whose code is OVERFLOW (see lockopt.PermitsError).
-- Reads no KEYS or ARGV. Defines inexact(v) and overflow().

-- inexact reports whether the count v is beyond the range.
local function inexact(v)
  return v > 9007199254740991 or v < -9007199254740991
end

-- overflow returns the error reply of a change refused by inexact.
local function overflow()
  return redis.error_reply('OVERFLOW the count would leave -+9007199254740991, the integers a Lua number holds exactly')
end
