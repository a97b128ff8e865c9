-- noted.lua: a permit waiter's attempt notes its Hub among those that may
-- listen on Redisson's channel (see yield.lua): once it listens, until a
-- while after it leaves; and, refused before the queue shows it, because
-- it is about to listen.
-- Reads ARGV[6] (the waiter's entry, "" for a single attempt), ARGV[9]
-- (how long, in ms, its Hub may listen after it left) and ARGV[10] ("1"
-- if it listens already), and the local listeners and address(e), which
-- the primitive's fragment defines before it.
-- Defines subscribed and noted(r, listens).
-- uses fragment/listeners.lua

local subscribed = ARGV[10] == '1'

-- noted notes the waiter's Hub if listens is set, and returns r.
local function noted(r, listens)
  if ARGV[6] ~= '' and listens then
    listening(listeners, (address(ARGV[6])), tonumber(ARGV[9]))
  end
  return r
end
