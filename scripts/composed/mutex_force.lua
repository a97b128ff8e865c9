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
-- clock.lua: the server's clock, read once per script (TIME), so that
-- every use in one run sees the same instant.
-- Reads no KEYS or ARGV. Defines micros() and millis(): the server's clock
-- in microseconds and in milliseconds since the epoch.
local clock

local function micros()
  if not clock then
    local t = redis.call('time')
    clock = tonumber(t[1]) * 1000000 + tonumber(t[2])
  end
  return clock
end

local function millis()
  return math.floor(micros() / 1000)
end
-- fence.lua: a lock's fencing token: the mutex's (RFencedLock's counter),
-- a fair lock's or a write lock's (latchkey's own counters).
-- Reads the local token (the counter's key), which the script, or the
-- fragment that names its KEYS (mutex_keys.lua, fair_state.lua), defines
-- before it.
-- Defines fence().
-- uses fragment/clock.lua

-- fence returns the next fencing token. A counter that is missing (new,
-- expired, or lost to a restart without persistence), or that a client
-- which never seeds it (Redisson's RFencedLock) started again from 1,
-- starts from the server's clock in microseconds: every token drawn since
-- a counter's start is below the clock, so the new start is above every
-- token handed out before (1e15 µs is 2001).
-- A counter lives a day from its start, and again from every 256th token:
-- a lock that is no longer used leaves no key for long ("a lock per
-- order"), and the refresh costs one command in 256 draws, not one in
-- each. A counter that expires in use starts again, higher.
local function fence()
  local t = redis.call('incr', token)
  if t < 1e15 then
    t = micros()
    redis.call('set', token, t, 'PX', '86400000')
  elseif t % 256 == 0 then
    redis.call('pexpire', token, '86400000')
  end
  return t
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
-- hold.lua: a Redisson lock hash {owner = hold count} as latchkey's
-- releases hand it on: who holds it, and a hold granted to a waiter.
-- Reads ARGV[4] (see inputs.lua), and the locals lock (the hash) and
-- grant (the key naming the waiter the lock was granted to, until it
-- takes the grant), which the fragment that names the primitive's KEYS
-- defines before it.
-- Defines foreign_holder() and grant_hold(field, who).
-- uses fragment/inputs.lua

-- foreign_holder reports whether the lock's holder (its first field) is
-- not a latchkey owner, whose ids are a version 8 UUID, then ':': its
-- release will grant nothing, and only Redisson's channel will say that
-- the lock is free.
local function foreign_holder()
  local f = redis.call('hkeys', lock)[1] or ''
  return not (string.sub(f, 15, 15) == '8' and string.sub(f, 37, 37) == ':')
end

-- grant_hold makes the owner field the holder of the free lock, with a
-- lease of the grace only, and records the grant to the waiter who until
-- it takes it (its next attempt extends the lease to its own).
local function grant_hold(field, who)
  redis.call('hset', lock, field, 1)
  redis.call('pexpire', lock, grace)
  redis.call('set', grant, who, 'PX', grace)
end
-- subscribers.lua: the clients subscribed to a channel itself.
--
-- PUBLISH answers how many clients received a message, counting those
-- whose pattern matched the channel (a latchkey watch listens by pattern),
-- who wait for nothing. A release that decides by who heard it whether
-- Redisson's waiters listen asks the server who subscribed to the
-- channel itself, as Redisson's waiters do: PUBSUB NUMSUB, or SHARDNUMSUB
-- where the scripts publish with SPUBLISH.
-- Reads ARGV[2] (see inputs.lua).
-- Defines subscribers(channel).
-- uses fragment/inputs.lua

local function subscribers(channel)
  local numsub = pub == 'SPUBLISH' and 'shardnumsub' or 'numsub'
  return tonumber(redis.call('pubsub', numsub, channel)[2])
end
-- mutex.lua: the mutex's handoff, on a Redisson RLock hash and latchkey's
-- waiter queue beside it (see queue.lua).
--
-- Mutual exclusion is the hash's, exactly as Redisson's; the queue decides
-- who is next. A waiter that finds the lock held joins the queue and
-- learns its rank. A release publishes "0" on the shared Redisson channel,
-- as Redisson does, and grants the lock to the waiter at the head of the
-- queue in the same call: that waiter becomes the holder (its owner field,
-- count 1, a fresh fencing token) with a lease of the grace only, and a
-- letter "@<key> <token> <server clock in µs>" on the channel of its
-- client's pub/sub Hub tells it, so that it returns from Lock without
-- another round trip. The waiter then extends the lease to its own (or,
-- having given up, gives the lock back); one that died or missed the
-- letter costs at most the grace. A waiter that heads the queue after a
-- grant is told so with "@<key> next". Redisson clients know nothing of
-- the queue: to them the lock is held by an ordinary owner.
--
-- Redisson's waiters are not starved, though: they attempt when they hear
-- the release's "0", and would find the lock granted every time while
-- latchkey waiters queue. So they have a place in the queue (see
-- queue.lua). A release whose "0" more subscribers of the channel heard
-- (see subscribers.lua) than latchkey listens with (none: a latchkey
-- waiter listens on Redisson's channel only while a Redisson client
-- holds, or heads a RedLock's queue, whose releases never yield) puts
-- Redisson's entry at the tail, unless it is queued. When a release finds it at the head and its "0" was heard, it
-- grants nothing: it leaves the lock free for Redisson's waiters, and
-- gives the next latchkey waiter its turn instead, "@<key> turn". That
-- waiter takes the free lock once Redisson's waiters had a moment to
-- (handoff.Yield), and until then, or the grace, no other latchkey caller
-- may (the grant key names it). So a Redisson waiter waits about as many
-- handoffs as latchkey waiters were queued when it was heard.
--
-- Reads the KEYS through the locals of mutex_keys.lua, which comes before
-- it, and ARGV[1..5] (see inputs.lua).
-- Defines yield_head(), grant_head(heard), hand_on(yield) and free(yield),
-- yield being "0", "1" or "2" (see hand_on).
-- uses fragment/clock.lua
-- uses fragment/fence.lua
-- uses fragment/queue.lua
-- uses fragment/hold.lua
-- uses fragment/subscribers.lua

-- yield_head gives the head of the queue its turn at the free lock, once
-- Redisson's waiters had theirs; heads whose client is gone are dropped
-- on the way, a few at most.
local function yield_head()
  local head = tell_head('turn', 8)
  if head then
    redis.call('set', grant, head, 'PX', grace)
  end
end

-- grant_head makes the first waiter in line the holder of the free lock,
-- for the grace time, and writes it a letter with its token and the
-- server's clock. Waiters whose client is gone are dropped on the way (a
-- few at most per call, to bound its work: the next release drops more).
-- Redisson's entry at the head yields the lock to Redisson's waiters if
-- heard says one may be listening, and is dropped otherwise.
local function grant_head(heard)
  if not waiting() then
    return
  end
  for _ = 1, 8 do
    local head = redis.call('lpop', queue)
    if not head then
      return
    end
    redis.call('zrem', deadlines, head)
    if head == redisson then
      if heard then
        yield_head()
        return
      end
    elseif tell(head, string.format('%.0f %.0f', fence(), micros())) then
      grant_hold(owner_of(head), head)
      break
    end
  end
  tell_next(8)
end

-- hand_on tells Redisson's waiters that the lock is free, and grants it to
-- the next in line. With yield "1" or "2", a Redisson client may have
-- heard that: Redisson's waiters take their place in line, if latchkey's
-- wait. "2" says that one subscriber of the channel is the releaser's own
-- alarm (a latchkey holder's, see hold.Alarm), which waits for nothing.
local function hand_on(yield)
  local own = yield == '2' and 1 or 0
  local heard = redis.call(pub, shared, '0') > 0 and yield ~= '0' and subscribers(shared) > own
  purge()
  if heard and waiting() and redis.call('lindex', queue, 0) then
    join(redisson)
  end
  grant_head(heard)
end

-- free deletes the lock, and any grant of it not taken, and hands it on.
local function free(yield)
  redis.call('del', lock, grant)
  hand_on(yield)
end
-- mutex_force.lua: delete the mutex whoever holds it (ForceUnlock), and
-- grant it to the first waiter in line (see mutex.lua).
-- KEYS[1..7] the mutex's (see mutex_keys.lua): lock hash, fencing counter,
--         queue, deadlines, Redisson's channel, Hub channel prefix, grant
-- KEYS[8] latchkey_lock__forced:{name}, on which the owners forced out are
--         published, space-separated, before the wake-up: a watch tells a
--         force-unlock from a release by it
-- ARGV[1..5] now, PUBLISH or SPUBLISH, queue entry life, grace, counted
--         (see inputs.lua)
-- ARGV[6] "1" to yield to Redisson's waiters (see mutex.lua)
-- Returns 1 if the lock existed, else 0.
-- uses fragment/mutex_keys.lua
-- uses fragment/mutex.lua
if redis.call('exists', lock) == 0 then
  return 0
end
-- Told before the wake-up, so that a watch hears it first.
redis.call(pub, KEYS[8], table.concat(redis.call('hkeys', lock), ' '))
free(ARGV[6])
return 1
