-- lock_take.lua: a hold that a release granted, taken by its holder, or a
-- hold extended: the lease set as lock_renew.lua sets it, and the lock's
-- grant key deleted. A release grants only a free lock, so a grant key
-- beside a hold names its holder until the holder takes the grant; left
-- in place, it would outlive a lease shorter than the grace and keep
-- newcomers out of the free lock until the grace ended (see
-- fragment/mutex.lua).
-- KEYS[2i-1] a lock hash, KEYS[2i] its grant key, latchkey_lock_grant:{N}
--           (all KEYS share one cluster hash slot)
-- ARGV[1]   lease in ms
-- ARGV[i+1] the owner field that must still be present in KEYS[2i-1]
-- Returns an array with, for each hold, 1 if its TTL was reset, 0 if the
-- owner no longer holds it, -1 if the key now holds another type of value
-- (another primitive took the name).
local out = {}
for i = 1, #KEYS / 2 do
  local lock = KEYS[2 * i - 1]
  local held = redis.pcall('hexists', lock, ARGV[i + 1])
  if type(held) == 'table' then
    out[i] = -1
  elseif held == 1 then
    redis.call('pexpire', lock, ARGV[1])
    redis.call('del', KEYS[2 * i])
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
