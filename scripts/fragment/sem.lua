-- sem.lua: the semaphore's KEYS, the entries of its waiter queue, and its
-- grants, on a Redisson RSemaphore count and latchkey's queue beside it.
--
-- The count is Redisson's: the permits available. Latchkey's waiters queue
-- in order (see queue.lua): a waiter that finds too few permits, or others
-- waiting, joins the queue. Whatever frees permits (a release, an
-- addition, a waiter leaving the head) hands them at once to the waiters
-- at the head, in order, as far as they go (see permits.lua). Permits
-- handed to a waiter are taken off the count, as if it had acquired them,
-- recorded as its grant, and a letter "@<key> <permits> <server clock in
-- µs>" on the channel of its client's pub/sub Hub tells it. The waiter then
-- takes the grant with its next attempt, and returns from Acquire only on
-- that attempt's answer that it was still there. A grant not taken within
-- the grace is taken back (a waiter that died costs the grace): a take
-- that comes later finds nothing, and its waiter waits on, queued again.
-- Redisson's message, the permits now available, still goes out on
-- Redisson's channel after every release; a release that a Redisson
-- client may wait for leaves the permits to it for a moment (see
-- yield.lua).
--
-- KEYS[1] semaphore name                      string: the permits available
-- KEYS[2] redisson_sc:{name}                  Redisson's channel
-- KEYS[3] latchkey_semaphore_queue:{name}     list of waiter entries, oldest first
-- KEYS[4] latchkey_semaphore_timeout:{name}   zset: entry -> deadline (ms, client clock)
-- KEYS[5] latchkey_semaphore_grant:{name}     zset: granted entry -> end of its grace
--                                             (ms, server clock)
-- KEYS[6] latchkey_semaphore__channel:{name}  prefix of each Hub's channel, <prefix>:<hub id>
-- KEYS[7] latchkey_semaphore_listeners:{name} zset: Hub id -> until when it may listen on
--                                             Redisson's channel (ms; see listeners.lua)
-- KEYS[8] latchkey_semaphore_turn:{name}      set while Redisson's waiters have their turn
-- A waiter entry is <hub id>/<permits>/<key>, key being its letters'
-- address (see entry.lua).
-- Reads ARGV[2] and ARGV[4] (see inputs.lua).
-- Defines count, shared, queue, deadlines, grants, hubs, listeners and
-- turn (the KEYS), granting, restock(), hand(e), announce(n) and
-- granted().
-- uses fragment/numbers.lua
-- uses fragment/entry.lua
-- uses fragment/clock.lua
-- uses fragment/lifetime.lua
local count, shared, queue, deadlines = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local grants, hubs, listeners, turn = KEYS[5], KEYS[6], KEYS[7], KEYS[8]

-- granting reports whether some grant may not be taken yet.
local granting = redis.call('exists', grants) == 1

-- restock takes back the grants whose grace is over, and returns how many
-- permits came back.
local function restock()
  if not granting then
    return 0
  end
  local t, back = millis(), 0
  for _, e in ipairs(redis.call('zrangebyscore', grants, '0', t)) do
    back = back + need(e)
  end
  if back > 0 then
    redis.call('incrby', count, back)
    redis.call('zremrangebyscore', grants, '0', t)
  end
  return back
end

-- hand records the grant of entry e's permits, until the grace is over.
-- The grants hold permits: they live as long as the count.
local function hand(e)
  redis.call('zadd', grants, millis() + grace, e)
  follow(grants, count)
  granting = true
end

-- announce publishes n, the permits available, on Redisson's channel,
-- and returns how many clients heard it.
local function announce(n)
  return redis.call(pub, shared, n)
end

-- granted returns the entries granted permits and not taken yet.
local function granted()
  if not granting then
    return {}
  end
  return redis.call('zrange', grants, '0', '-1')
end
