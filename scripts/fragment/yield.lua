-- yield.lua: Redisson's waiters have their turn at a semaphore's permits
-- (see sem.lua and pes.lua).
--
-- Redisson's waiters listen on Redisson's channel and attempt at each
-- release's message. Were every release to hand the permits to latchkey's
-- queue, they would find none each time, for as long as latchkey's
-- waiters keep coming. So Redisson's waiters have a place in the queue
-- (see queue.lua). After a release publishes the permits available, it
-- counts who listens (see subscribers.lua), if anyone heard, and
-- latchkey's own listeners among them: the
-- Hubs of queued waiters and of grants not taken yet, and those noted in
-- the listeners zset (see listeners.lua), where a waiter's calls note its
-- Hub while it listens without being queued, and for its Hub's linger
-- after it left. More than those: a Redisson client waits, and Redisson's
-- entry joins the tail of the queue, unless it is queued. When a release
-- finds it at the head with permits free and a Redisson client still
-- listening, the turn begins: the permits stay free for Redisson's woken
-- waiters for a moment (the turn key; the entry becomes "redisson:turn"),
-- nobody of latchkey's takes any, and the waiter behind is told "turn".
-- Once the turn is over the entry leaves. Where the server cannot count
-- every listener (a cluster's PUBLISH), Redisson's waiters get no place.
--
-- Reads the inputs (see inputs.lua), the locals shared, queue, deadlines,
-- listeners and turn (the KEYS), and address(e) and granted(), which the
-- primitive's fragment defines before it.
-- Defines turn_wait, yield_ms, at_redisson(head, free) and
-- place_redisson(n).
-- uses fragment/queue.lua
-- uses fragment/listeners.lua
-- uses fragment/subscribers.lua
-- uses fragment/numbers.lua

-- turn_wait is the ms left of Redisson's turn, once serving stopped at it;
-- yield_ms, set by a release, how long a turn it starts lasts.
local turn_wait, yield_ms

-- ours counts latchkey's Hubs that may listen on Redisson's channel,
-- stopping at upto. The notes alone are distinct Hubs: when they are
-- enough, nothing is read.
local function ours(upto)
  if redis.call('zcount', listeners, now, '+inf') >= upto then
    return upto
  end
  local seen, n = {}, 0
  local function see(hub)
    if hub and not seen[hub] then
      seen[hub], n = true, n + 1
    end
    return n >= upto
  end
  for _, hub in ipairs(redis.call('zrangebyscore', listeners, now, '+inf')) do
    if see(hub) then
      return n
    end
  end
  for _, list in ipairs({redis.call('lrange', queue, '0', '-1'), granted()}) do
    for _, e in ipairs(list) do
      if see((address(e))) then
        return n
      end
    end
  end
  return n
end

-- redisson_waits reports whether the clients subscribed to Redisson's
-- channel are more than latchkey's Hubs; n, the clients that heard the
-- release's message, if given, says whether to ask (nobody heard: none
-- waits). Those who heard by a pattern do not count (see subscribers.lua).
local function redisson_waits(n)
  if not counted or n == 0 then
    return false
  end
  n = subscribers(shared)
  return n > 0 and ours(n) < n
end

-- at_redisson deals with Redisson's entry, head, at the head of the
-- queue, free permits being available: it reports whether serving stops
-- there, for Redisson's turn. Without free permits the entry keeps its
-- place. A release starts the
-- turn if a Redisson client still listens; once the turn is over, or if
-- none listens, or the caller is not a release, the entry leaves.
local function at_redisson(head, free)
  if head == redisson_turn then
    turn_wait = redis.call('pttl', turn)
    if turn_wait > 0 then
      return true
    end
  elseif free < 1 then
    return true
  elseif yield_ms and redisson_waits() then
    redis.call('lset', queue, '0', redisson_turn)
    redis.call('zrem', deadlines, redisson)
    redis.call('zadd', deadlines, now + life, redisson_turn)
    redis.call('set', turn, '1', 'px', yield_ms)
    turn_wait = yield_ms
    local after = redis.call('lindex', queue, '1')
    if after then
      tell(after, 'turn')
    end
    return true
  end
  redis.call('lpop', queue)
  redis.call('zrem', deadlines, head)
  return false
end

-- place_redisson queues Redisson's entry at the tail if n, the clients
-- that heard the release (nil: ask), show a Redisson client waiting
-- while latchkey's waiters queue.
local function place_redisson(n)
  if waiting() and redisson_waits(n) and redis.call('lindex', queue, '0') then
    join(redisson)
  end
end
