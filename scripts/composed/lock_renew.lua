-- lock_renew.lua: the watchdog's batch renewal of hash locks.
-- KEYS[i]   a lock hash (all KEYS share one cluster hash slot)
-- ARGV[1]   lease in ms
-- ARGV[i+1] the owner field that must still be present in KEYS[i]
-- Returns an array with, for each key, 1 if its TTL was reset, 0 if the
-- owner no longer holds it, -1 if the key now holds another type of value
-- (another primitive took the name). A hold answered 0 or -1 is lost and
-- must not be renewed again; one such key never fails the others.
local out = {}
for i, key in ipairs(KEYS) do
  local held = redis.pcall('hexists', key, ARGV[i + 1])
  if type(held) == 'table' then
    out[i] = -1
  elseif held == 1 then
    redis.call('pexpire', key, ARGV[1])
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
