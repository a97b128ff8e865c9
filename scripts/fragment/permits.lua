-- permits.lua: hands freed permits to the waiters at the head of a
-- semaphore's queue, in order, as far as they go: a waiter for more than
-- is left blocks those behind it.
-- Redisson's entry in the queue stops it while Redisson's waiters have
-- their turn (see yield.lua).
-- Reads the local count (the key of the permits available) and need(e),
-- hand(e) and restock(), which the primitive's fragment defines before
-- it, and the queue (see queue.lua). A grant is noted among the
-- listeners of Redisson's channel unless granted() lists it (see yield.lua).
-- Defines available, handed, get(), serve(self, moved, took), hand_on(ms),
-- refresh() and dequeue(e).
-- uses fragment/clock.lua
-- uses fragment/queue.lua
-- uses fragment/yield.lua

-- available is the permits available after the latest serve; handed is 1
-- once the call granted permits to a waiter, else 0: its scripts answer
-- it, and the caller's client gives back after the grace what nobody took
-- (see the Go side's Granted).
local available, handed = nil, 0

-- get returns the permits available.
local function get()
  return tonumber(redis.call('get', count) or '0')
end

-- serve hands the available permits to the waiters at the head of the
-- queue, in order, as far as they go, and sets available to what is left.
-- The entry self, if reached, takes its permits itself (took, if given,
-- finishes that); the others are granted theirs (hand) and told. Waiters
-- whose client is gone are dropped on the way (8 at most, to bound the
-- call's work). Redisson's entry stops it for Redisson's turn, or leaves
-- (see at_redisson). The head after a grant, or after the head left (moved) or
-- served itself, is told that it is next: only the head attempts on
-- Redisson's messages (see the Go side), and a waiter learns its rank from
-- its attempts and from that letter. Returns whether self was served.
local function serve(self, moved, took)
  available = get()
  if not waiting() then
    return false
  end
  local served, gave, dropped = false, false, 0
  while dropped < 8 do
    local head = redis.call('lindex', queue, '0')
    if not head then
      break
    end
    if head == redisson or head == redisson_turn then
      if at_redisson(head, available) then
        return served
      end
    else
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
        gave, handed = true, 1
      else
        dropped = dropped + 1
      end
    end
  end
  -- The new head is next: should a grant never be taken, it tries once
  -- the grace is over, and from then on it heeds Redisson's messages.
  if gave or moved then
    tell_next(8 - dropped)
  end
  return served
end

-- hand_on serves the queue with the permits a release freed; a turn of
-- Redisson's waiters that it finds due lasts ms (see yield.lua).
local function hand_on(ms)
  yield_ms = ms
  serve(nil)
end

-- refresh drops the queue entries whose deadline passed and returns to the
-- count the permits that came back (restock): what a call does before it
-- serves the queue. It returns how many came back.
local function refresh()
  purge()
  return (restock())
end

-- dequeue takes entry e out of the queue; if it was at the head, those
-- behind it may fit in what it could not, and are served. It reports
-- whether e was queued.
local function dequeue(e)
  local queued, head = leave(e)
  if head then
    refresh()
    serve(nil, true)
  end
  return queued
end
