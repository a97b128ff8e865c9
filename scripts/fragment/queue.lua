-- queue.lua: latchkey's waiter queue beside a primitive's keys: a list of
-- entries, oldest first, and a zset of entry -> deadline (ms, client
-- clock). Every call purges the entries whose deadline passed; every
-- attempt of a waiter refreshes its own. Redisson clients know nothing of
-- the queue.
-- Reads ARGV[1] and ARGV[3] (see inputs.lua), and the locals queue (the
-- list) and deadlines (the zset), and address(e) (the Hub id and the
-- letter key of entry e), which the fragments that name the primitive's
-- KEYS and its entries define before it.
-- Redisson's waiters have a place in the queue too: the entry "redisson"
-- (and, once their turn at a semaphore's permits began, "redisson:turn"),
-- which a release puts at the tail when a Redisson client may be waiting
-- (see mutex.lua and yield.lua). It has no letters.
-- Defines redisson, redisson_turn, waiting(), purge(), join(e), leave(e),
-- tell(e, body), tell_head(body, n) and tell_next(n).
-- uses fragment/letter.lua

local redisson, redisson_turn = 'redisson', 'redisson:turn'

-- waiting reports whether anyone waits: whether the queue's keys exist.
-- It is asked once, and only off the fast path, where a free lock or
-- enough permits are taken by a caller that never queued.
local known
local function waiting()
  if known == nil then
    known = redis.call('exists', deadlines) == 1
  end
  return known
end

-- purge drops the entries whose deadline passed.
local function purge()
  if not waiting() then
    return
  end
  -- inline fragment/expire_entries.lua
end

-- join queues e at the tail, unless it is queued, and sets its deadline
-- ARGV[3] from now; it returns e's place in the queue, 0 at the head.
local function join(e)
  local rank
  -- inline fragment/enqueue.lua
  known = true
  return rank
end

-- leave takes e out of the queue; it reports whether e was queued, and
-- whether it was at the head.
local function leave(e)
  if not waiting() or redis.call('zrem', deadlines, e) == 0 then
    return false, false
  end
  local head = redis.call('lindex', queue, '0') == e
  redis.call('lrem', queue, '1', e)
  return true, head
end

-- tell writes a letter to the waiter with queue entry e (see letter).
-- Redisson's entry takes none, and is never gone.
local function tell(e, body)
  if e == redisson or e == redisson_turn then
    return true
  end
  local hub, key = address(e)
  return letter(hub, key, body)
end

-- tell_head writes body to the head of the queue; heads whose client is
-- gone are dropped on the way, n at most. It returns the head told, if
-- any, and how many were dropped.
local function tell_head(body, n)
  local dropped = 0
  while dropped < n do
    local head = redis.call('lindex', queue, '0')
    if not head or tell(head, body) then
      return head, dropped
    end
    redis.call('lpop', queue)
    redis.call('zrem', deadlines, head)
    dropped = dropped + 1
  end
  return nil, dropped
end

-- tell_next tells the head of the queue that it is next: should the grant
-- just made never be taken, it tries once the grace is over. Heads whose
-- client is gone are dropped on the way, n at most; it returns how many.
local function tell_next(n)
  local _, dropped = tell_head('next', n)
  return dropped
end
