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
