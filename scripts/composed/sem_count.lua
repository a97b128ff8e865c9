-- clock.lua: the server's clock, read once per script (TIME), so that
-- every use in one run sees the same instant.
-- Reads no KEYS or ARGV. Defines micros() and millis(): the server's clock
-- in microseconds and in milliseconds since the epoch.
local clock

local function micros()
  if not clock then
    local t = redis.call('time')
    clock = tonumber(t[1]) * 1000000 + tonumber(t[2])
  end
  return clock
end

local function millis()
  return math.floor(micros() / 1000)
end
-- entry.lua: a semaphore's waiter entry, <hub id>/<permits>/<key>: the
-- Hub whose channel takes its letters, the permits it waits for, and its
-- letters' address (a permit semaphore's is its first permit's id in hex,
-- from which the others follow: see pes.lua). A permit semaphore's waiter
-- of an earlier version queues as <hub id>/<its permits' ids in hex>, the
-- first addressing its letters; both are read.
-- Reads no KEYS or ARGV. Defines need(e) and address(e).

-- need returns the permits entry e waits for.
local function need(e)
  local n = string.match(e, '^[^/]*/(%d+)/')
  if n then
    return tonumber(n)
  end
  return #string.match(e, '/(%x*)$') / 32
end

-- address returns the Hub id and the letter key of entry e.
local function address(e)
  local hub, key = string.match(e, '^([^/]*)/%d+/(.*)$')
  if hub then
    return hub, key
  end
  return string.match(e, '^([^/]*)/(' .. string.rep('%x', 32) .. ')')
end
-- sem_count.lua: the permits available (AvailablePermits): the count, and
-- the permits of grants whose grace is over, which are nobody's although
-- only the next call on the semaphore, or its granter, puts them back in
-- the count (see sem.lua).
-- KEYS[1] semaphore name                   string: the permits available
-- KEYS[2] latchkey_semaphore_grant:{name}  zset: granted entry -> end of its
--                                          grace (ms, server clock)
-- Returns the permits available. Reads only.
-- uses fragment/clock.lua
-- uses fragment/entry.lua
local n = tonumber(redis.call('get', KEYS[1]) or '0')
for _, e in ipairs(redis.call('zrangebyscore', KEYS[2], 0, millis())) do
  n = n + need(e)
end
return n
