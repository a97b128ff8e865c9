-- rw_renew_read.lua: the watchdog's batch renewal of read holds of Redisson
-- RReadWriteLocks. Only the owners given are renewed, never other
-- processes' readers, so a crashed reader's holds expire with their lease.
-- KEYS[2i-1] a lock hash (all KEYS share one cluster hash slot)
-- KEYS[2i]   {name}:<owner>:rwlock_timeout, the owner's timeout key prefix
-- ARGV[1]    lease in ms
-- ARGV[i+1]  the owner id of item i
-- Returns an array with, for each item, 1 if the owner's timeout keys
-- 1..count (those still alive) were reset to the lease and the hash TTL
-- raised to at least the lease, 0 if the owner holds no live read hold,
-- -1 if the hash now holds another type of value (another primitive took
-- the name). A hold answered 0 or -1 is lost and must not be renewed again;
-- one such item never fails the others.
-- uses fragment/ttl.lua
local out = {}
for i = 1, #KEYS / 2 do
  local hash, prefix = KEYS[2 * i - 1], KEYS[2 * i]
  local held = redis.pcall('hget', hash, ARGV[i + 1])
  if type(held) == 'table' then
    out[i] = -1
    held = false
  end
  local n = tonumber(held) or 0
  local live = 0
  for j = 1, n do
    live = live + redis.call('pexpire', prefix .. ':' .. j, ARGV[1])
  end
  if live > 0 then
    extend(hash, ARGV[1])
    out[i] = 1
  elseif out[i] == nil then
    out[i] = 0
  end
end
return out
