-- mutex_keys.lua: the KEYS of every mutex script, and the shape of the
-- entries of its waiter queue.
-- KEYS[1] lock hash name                  {owner = hold count}
-- KEYS[2] redisson_lock_token:{name}      fencing counter (RFencedLock layout)
-- KEYS[3] latchkey_lock_queue:{name}      list of waiter entries, oldest first
-- KEYS[4] latchkey_lock_timeout:{name}    zset: waiter entry -> deadline (ms)
-- KEYS[5] redisson_lock__channel:{name}   the shared unlock channel
-- KEYS[6] latchkey_lock__channel:{name}   prefix of each Hub's channel,
--                                         <prefix>:<hub id>
-- KEYS[7] latchkey_lock_grant:{name}      the entry the lock was granted
--                                         to, until it takes the grant
-- A waiter entry is <hub id>/<key>, where key, the letter's address, is
-- the owner id, followed by /<call id> for an owner that may re-enter (one
-- owner may wait in two calls).
-- Defines lock, token, queue, deadlines, shared, hubs and grant (the
-- KEYS), address(e) and owner_of(e).
local lock, token, queue, deadlines = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local shared, hubs, grant = KEYS[5], KEYS[6], KEYS[7]

-- address returns the Hub id and the letter key of entry e.
local function address(e)
  return string.match(e, '^([^/]*)/(.*)$')
end

-- owner_of returns the owner id of entry e.
local function owner_of(e)
  return string.match(e, '^[^/]*/([^/]*)')
end
-- inputs.lua: the inputs that every script of a queued primitive (mutex,
-- fair lock, semaphore, permit semaphore) takes first, at the same
-- positions, so that a fragment reads them wherever it is used. The
-- script's own arguments follow, from ARGV[6].
-- ARGV[1] now: ms since the epoch, the client's clock
-- ARGV[2] PUBLISH or SPUBLISH
-- ARGV[3] how long a queue entry lives unless its waiter attempts again,
--         ms (the fair lock: how long a queued latchkey waiter's heartbeat
--         lasts, its liveness timeout)
-- ARGV[4] grace in ms: how long a grant waits for its waiter to take it
-- ARGV[5] "1" if PUBLISH (or SPUBLISH) counts every receiver of a Hub's
--         channel (a single server, or sharded pub/sub), "0" if not (a
--         cluster's PUBLISH counts only the node's own)
-- Defines now, pub, life (ARGV[3]), grace and counted (a boolean).
local now, pub, life, grace = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local counted = ARGV[5] == '1'
-- letter.lua: letters to latchkey waiters, on the channel of each one's
-- client's pub/sub Hub: "@<key> <body>", key being the waiter's address.
-- Reads ARGV[2] and ARGV[5] (see inputs.lua), and the local hubs, the
-- prefix of each Hub's channel (<prefix>:<hub id>), which the fragment that
-- names the primitive's KEYS defines before it.
-- Defines letter(hub, key, body).
-- uses fragment/inputs.lua

-- letter writes body to the waiter whose letters go to key on the channel
-- of the Hub hub, and reports whether someone may read it: false when the
-- server counts receivers and no connection heard it, so that the waiter's
-- client is gone. A waiter without a Hub (hub ''), whose client polls,
-- gets no letter: it finds what a letter would say by its next look.
local function letter(hub, key, body)
  if hub == '' then
    return true
  end
  return redis.call(pub, hubs .. ':' .. hub, '@' .. key .. ' ' .. body) > 0 or not counted
end
-- queue.lua: latchkey's waiter queue beside a primitive's keys: a list of
-- entries, oldest first, and a zset of entry -> deadline (ms, client
-- clock). Every call purges the entries whose deadline passed; every
-- attempt of a waiter refreshes its own. Redisson clients know nothing of
-- the queue.
-- Reads ARGV[1] and ARGV[3] (see inputs.lua), and the locals queue (the
-- list) and deadlines (the zset), and address(e) (the Hub id and the
-- letter key of entry e), which the fragment that names the primitive's
-- KEYS defines before it.
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
  for _, e in ipairs(redis.call('zrangebyscore', deadlines, '-inf', now)) do
    redis.call('lrem', queue, 1, e)
    redis.call('zrem', deadlines, e)
  end
end

-- join queues e at the tail, unless it is queued, and sets its deadline
-- ARGV[3] from now; it returns e's place in the queue, 0 at the head.
local function join(e)
  if redis.call('zadd', deadlines, now + life, e) == 1 then
    redis.call('rpush', queue, e)
  end
  known = true
  return redis.call('lpos', queue, e)
end

-- leave takes e out of the queue; it reports whether e was queued, and
-- whether it was at the head.
local function leave(e)
  if not waiting() or redis.call('zrem', deadlines, e) == 0 then
    return false, false
  end
  local head = redis.call('lindex', queue, 0) == e
  redis.call('lrem', queue, 1, e)
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
    local head = redis.call('lindex', queue, 0)
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
-- mutex_delete.lua: delete every key of a mutex that nobody holds (its
-- fencing counter, its waiter queue, a turn at the free lock), as
-- Redisson's RObject.delete. Waiters still queued, a moment while the
-- lock is free, are told to look again, and queue anew.
-- KEYS[1..7] the mutex's (see mutex_keys.lua): lock hash, fencing counter,
--         queue, deadlines, Redisson's channel, Hub channel prefix, grant
-- ARGV[1..5] now, PUBLISH or SPUBLISH, queue entry life, grace, counted
--         (see inputs.lua)
-- Returns -1 if the lock is held (nothing is deleted), 1 if a key
-- existed, else 0. A counter deleted starts again from the server's clock
-- (see fence.lua), so tokens keep increasing.
-- uses fragment/mutex_keys.lua
-- uses fragment/queue.lua
if redis.call('exists', lock) == 1 then
  return -1
end
for _, e in ipairs(redis.call('lrange', queue, 0, -1)) do
  tell(e, '')
end
if redis.call('del', token, queue, deadlines, grant) == 0 then
  return 0
end
redis.call(pub, shared, '0')
return 1
