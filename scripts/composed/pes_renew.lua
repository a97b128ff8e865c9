-- pes_renew.lua: the watchdog's batch renewal of permits kept alive
-- (Permit.KeepAlive) of Redisson RPermitExpirableSemaphores.
-- KEYS[i]   {name}:timeout, the leases zset of item i's semaphore (all
--           KEYS share one cluster hash slot)
-- ARGV[1]   lease in ms
-- ARGV[2]   now: ms since the epoch, the client's clock (leases end by the
--           holders' clocks, as in Redisson)
-- ARGV[i+2] the permit id of item i (16 raw bytes)
-- Returns an array with, for each item, 1 if its lease now ends ARGV[1]
-- ms from ARGV[2] (or the permit was made permanent meanwhile, and stays
-- so), 0 if the permit is not held: unknown, released, or its lease ended
-- (it is left for the next call on the semaphore to take back, as any
-- expired permit), -1 if the key holds another type of value (another
-- primitive took the name). A permit answered 0 or -1 is lost and must not
-- be renewed again; one such item never fails the others.
local lease, now = tonumber(ARGV[1]), tonumber(ARGV[2])
local never = 922337203685477

-- renew answers for the permit id in the zset key.
local function renew(key, id)
  local score = redis.pcall('zscore', key, id)
  if type(score) == 'table' then
    return -1
  end
  score = tonumber(score) or 0 -- false: not in the zset
  if score <= now then
    return 0
  end
  if score < never then
    redis.call('zadd', key, 'xx', now + lease, id)
  end
  return 1
end

local out = {}
for i, key in ipairs(KEYS) do
  out[i] = renew(key, ARGV[i + 2])
end
return out
