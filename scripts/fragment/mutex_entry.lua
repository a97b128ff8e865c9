-- mutex_entry.lua: the mutex's waiter entries, <hub id>/<key> (see
-- mutex_keys.lua): the Hub whose channel takes the waiter's letters, and
-- their address, which starts with the waiter's owner id.
-- Reads no KEYS or ARGV. Defines address(e) and owner_of(e).

-- address returns the Hub id and the letter key of entry e.
local function address(e)
  return string.match(e, '^([^/]*)/(.*)$')
end

-- owner_of returns the owner id of entry e.
local function owner_of(e)
  return string.match(e, '^[^/]*/([^/]*)')
end
