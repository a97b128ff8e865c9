-- ttl.lua: a key's TTL raised, never shortened.
-- Reads no KEYS or ARGV. Defines extend(key, ms).

-- extend sets the TTL of key to ms unless it has more left; a key without
-- a TTL gets one.
local function extend(key, ms)
  if redis.call('pttl', key) < tonumber(ms) then
    redis.call('pexpire', key, ms)
  end
end
