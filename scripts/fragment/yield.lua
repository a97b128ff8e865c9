-- yield.lua: a semaphore's release serves Redisson's waiters too (see
-- sem.lua and pes.lua).
--
-- Redisson's waiters listen on Redisson's channel and attempt at each
-- release's message. Were every release to hand the permits to latchkey's
-- queue, they would find none each time, for as long as latchkey's
-- waiters keep coming. So a release that frees permits the head of the
-- queue could use first asks the server how many connections listen on
-- Redisson's channel (PUBSUB NUMSUB, or SHARDNUMSUB with sharded pub/sub),
-- and counts latchkey's own among them: a latchkey waiter listens there
-- too (it counts Redisson's releases), and its Hub stays subscribed for a
-- while after its last waiter left. Those are the Hubs of the waiters in
-- the queue, and those noted in the listeners zset (Hub id -> until when,
-- server clock ms): a waiter's calls note its Hub when it leaves the
-- queue or listens without being queued, a grant notes its waiter's Hub
-- until the waiter takes it. More listeners than latchkey's: a Redisson
-- client waits, and the release leaves the permits free for a turn,
-- during which its message wakes Redisson's waiters and no latchkey
-- caller takes permits (the turn key); the head of the queue is told
-- "turn", and attempts once it is over. Where the server cannot count
-- every listener (a cluster's PUBLISH), no release yields.
--
-- Reads the inputs (see inputs.lua), the locals shared, queue, listeners
-- and turn (the KEYS), and address(e), which the primitive's fragment
-- defines before it.
-- Defines heard(hub, ms), turn_left(), redisson_waits() and
-- yield_turn(ms).
-- uses fragment/clock.lua
-- uses fragment/queue.lua

-- heard notes that the Hub hub may listen on Redisson's channel for ms
-- from now; the zset lives as long as its latest note.
local function heard(hub, ms)
  redis.call('zadd', listeners, millis() + ms, hub)
  if redis.call('pttl', listeners) < ms then
    redis.call('pexpire', listeners, ms)
  end
end

-- turn_left returns the ms left of Redisson's waiters' turn, 0 if none.
local left
local function turn_left()
  if left == nil then
    left = math.max(redis.call('pttl', turn), 0)
  end
  return left
end

-- ours counts latchkey's Hubs that may listen on Redisson's channel,
-- stopping at upto.
local function ours(upto)
  redis.call('zremrangebyscore', listeners, '-inf', millis())
  local seen, n = {}, 0
  local function see(hub)
    if hub and not seen[hub] then
      seen[hub], n = true, n + 1
    end
    return n >= upto
  end
  for _, hub in ipairs(redis.call('zrange', listeners, 0, -1)) do
    if see(hub) then
      return n
    end
  end
  for _, e in ipairs(redis.call('lrange', queue, 0, -1)) do
    if see((address(e))) then
      return n
    end
  end
  return n
end

-- redisson_waits reports whether a client other than latchkey's Hubs
-- listens on Redisson's channel: a Redisson waiter.
local function redisson_waits()
  if not counted then
    return false
  end
  local sub = pub == 'SPUBLISH' and 'shardnumsub' or 'numsub'
  local n = tonumber(redis.call('pubsub', sub, shared)[2])
  return n > 0 and ours(n) < n
end

-- yield_turn leaves the permits to Redisson's waiters for ms, and tells
-- the head of the queue that its turn comes after.
local function yield_turn(ms)
  redis.call('set', turn, '1', 'px', ms)
  left = ms
  tell_head('turn', 8)
end
