-- lock_renew.lua: the watchdog's batch renewal of hash locks.
-- KEYS[i]   a lock hash (all KEYS share one cluster hash slot)
-- ARGV[1]   lease in ms
-- ARGV[i+1] the owner field that must still be present in KEYS[i]
-- Returns an array with, for each key, 1 if its TTL was reset, 0 if the
-- owner no longer holds it (the hold is lost and must not be renewed again).
local out = {}
for i, key in ipairs(KEYS) do
  if redis.call('hexists', key, ARGV[i + 1]) == 1 then
    redis.call('pexpire', key, ARGV[1])
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
