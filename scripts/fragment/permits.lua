-- permits.lua: hands freed permits to the waiters at the head of a
-- semaphore's queue, in order, as far as they go: a waiter for more than
-- is left blocks those behind it.
-- Reads the local count (the key of the permits available) and need(e)
-- and hand(e), which the primitive's fragment defines before it, and the
-- queue (see queue.lua).
-- Defines available, get() and serve(self, moved, took).
-- uses fragment/clock.lua
-- uses fragment/queue.lua

-- available is the permits available after the latest serve.
local available

-- get returns the permits available.
local function get()
  return tonumber(redis.call('get', count) or '0')
end

-- serve hands the available permits to the waiters at the head of the
-- queue, in order, as far as they go, and sets available to what is left.
-- The entry self, if reached, takes its permits itself (took, if given,
-- finishes that); the others are granted theirs (hand) and told. Waiters
-- whose client is gone are dropped on the way (8 at most, to bound the
-- call's work). The head after a grant, or after the head left (moved) or
-- served itself, is told that it is next: only the head attempts on
-- Redisson's messages (see the Go side), and a waiter learns its rank from
-- its attempts and from that letter. Returns whether self was served.
local function serve(self, moved, took)
  available = get()
  if not waiting() then
    return false
  end
  local served, granted, dropped = false, false, 0
  while dropped < 8 do
    local head = redis.call('lindex', queue, 0)
    if not head then
      break
    end
    local k = need(head)
    if k > available then
      break
    end
    redis.call('lpop', queue)
    redis.call('zrem', deadlines, head)
    if head == self then
      served, moved = true, true
      available = redis.call('decrby', count, k)
      if took then
        took()
      end
    elseif tell(head, string.format('%d %.0f', k, micros())) then
      available = redis.call('decrby', count, k)
      hand(head)
      granted = true
    else
      dropped = dropped + 1
    end
  end
  -- The new head is next: should a grant never be taken, it tries once
  -- the grace is over, and from then on it heeds Redisson's messages.
  if granted or moved then
    tell_next(8 - dropped)
  end
  return served
end
