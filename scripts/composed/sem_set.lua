-- once.lua: the request record, so that a request sent twice (go-redis
-- resends a command whose reply was lost) is applied once and answered the
-- same way both times.
--
-- Reads the last of KEYS and of ARGV, which the runner appends to those
-- the script declares, and takes them off again, so the script sees its
-- KEYS and ARGV as its header describes them:
-- KEYS[#KEYS] latchkey_once:{name}:<request id>, the record of this request
-- KEYS[#KEYS-n..#KEYS-1] records of the client's requests that were
--             answered, and are done with, to delete (n is ARGV[#ARGV-1])
-- ARGV[#ARGV] how long the record lives, in ms; 0 when repeating the
--             request is harmless, and then nothing is read or written;
--             negative to resolve a request its caller gave up on (below)
-- ARGV[#ARGV-1] n, how many records to delete come before this one's
-- A record holds the reply: "n<integer>" or "a<integer>,<integer>,...", or
-- "x" for a request cancelled before it applied.
-- Defines once_replay() and once_record(reply); a request to resolve is
-- answered here, and the script does not run.
local once_key = table.remove(KEYS)
local once_ttl = tonumber(table.remove(ARGV))
local done_with = tonumber(table.remove(ARGV))
if done_with > 0 then
  local old = {}
  for i = 1, done_with do
    old[i] = table.remove(KEYS)
  end
  redis.call('del', unpack(old))
end

-- once_decode turns a record back into the reply it holds; a cancelled
-- request answers CANCELLED, and does nothing.
local function once_decode(rec)
  if rec == 'x' then
    return redis.status_reply('CANCELLED')
  end
  local out = {}
  for v in string.gmatch(string.sub(rec, 2), '[^,]+') do
    out[#out + 1] = tonumber(v)
  end
  if string.sub(rec, 1, 1) == 'n' then
    return out[1]
  end
  return out
end

-- A request to resolve answers with the record of the request, if it
-- applied; otherwise it records the request as cancelled, so that a copy
-- of it still on its way does nothing, and answers CANCELLED.
if once_ttl < 0 then
  local rec = redis.call('get', once_key)
  if rec then
    return once_decode(rec)
  end
  redis.call('set', once_key, 'x', 'px', -once_ttl)
  return redis.status_reply('CANCELLED')
end

-- once_replay returns the reply recorded by an earlier run of this request,
-- or nil when there is none.
local function once_replay()
  if once_ttl == 0 then
    return nil
  end
  local rec = redis.call('get', once_key)
  if not rec then
    return nil
  end
  return once_decode(rec)
end

-- once_record records reply, an integer or an array of integers, as the
-- answer to a resend of this request, and returns it.
local function once_record(reply)
  if once_ttl > 0 then
    local rec
    if type(reply) == 'table' then
      local parts = {}
      for i, v in ipairs(reply) do
        parts[i] = string.format('%d', v)
      end
      rec = 'a' .. table.concat(parts, ',')
    else
      rec = 'n' .. string.format('%d', reply)
    end
    redis.call('set', once_key, rec, 'px', once_ttl)
  end
  return reply
end
-- replay.lua: answers a resent request as its first run did, first thing,
-- for a script whose every run that changes state is recorded (see
-- once.lua). A request not applied before goes on to the script.
-- Reads no KEYS or ARGV of its own. Defines nothing.
-- uses fragment/once.lua
local replayed = once_replay()
if replayed then
  return replayed
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
-- entry.lua: a semaphore's waiter entry, <hub id>/<permits>/<key>: the
-- Hub whose channel takes its letters, the permits it waits for, and its
-- letters' address (a permit semaphore's is its first permit's id in hex,
-- from which the others follow: see pes.lua). A permit semaphore's waiter
-- of an earlier version queues as <hub id>/<its permits' ids in hex>, the
-- first addressing its letters; both are read.
-- Reads no KEYS or ARGV. Defines need(e) and address(e).

-- need returns the permits entry e waits for.
local function need(e)
  local n = string.match(e, '^[^/]*/(%d+)/')
  if n then
    return tonumber(n)
  end
  return #string.match(e, '/(%x*)$') / 32
end

-- address returns the Hub id and the letter key of entry e.
local function address(e)
  local hub, key = string.match(e, '^([^/]*)/%d+/(.*)$')
  if hub then
    return hub, key
  end
  return string.match(e, '^([^/]*)/(' .. string.rep('%x', 32) .. ')')
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
-- lifetime.lua: how long a semaphore's keys live.
--
-- The keys that hold permits (the grants of a semaphore, the leases of a
-- permit semaphore) live as long as the count. Were such a key to outlive
-- the count, the permits in it would come back into a count created anew
-- when they are returned, and were it to expire first, they would be lost
-- for good; so every script that writes it, or sets the count with SET
-- (which drops its TTL, or sets one), has it follow the count.
-- Reads no KEYS or ARGV. Defines follow(key, count) and
-- try_set(count, n, ttl).

-- follow gives key, a zset, the TTL of count: the same ms left, or none.
-- A TTL is taken off by writing the zset anew rather than with PERSIST,
-- which the least-privilege ACL in the latchkey package doc does not
-- grant; it is rare (SetPermits on a semaphore that had a TTL).
local function follow(key, count)
  local ttl = redis.call('pttl', count)
  if ttl > 0 then
    redis.call('pexpire', key, ttl)
  elseif ttl == -1 and redis.call('pttl', key) > 0 then
    local members = redis.call('zrange', key, 0, -1, 'withscores')
    redis.call('del', key)
    for i = 1, #members, 2 do
      redis.call('zadd', key, members[i + 1], members[i])
    end
  end
end

-- try_set sets count to n if it does not exist, to expire in ttl ms
-- unless ttl is 0 (Redisson's trySetPermits), and reports whether it did.
local function try_set(count, n, ttl)
  if tonumber(ttl) > 0 then
    return redis.call('set', count, n, 'nx', 'px', ttl) ~= false
  end
  return redis.call('set', count, n, 'nx') ~= false
end
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
-- uses fragment/inputs.lua
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
  for _, e in ipairs(redis.call('zrangebyscore', grants, 0, t)) do
    back = back + need(e)
  end
  if back > 0 then
    redis.call('incrby', count, back)
    redis.call('zremrangebyscore', grants, 0, t)
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
  return redis.call('zrange', grants, 0, -1)
end
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
-- listeners.lua: notes of latchkey's Hubs that may listen on Redisson's
-- channel of a semaphore (see yield.lua), in a zset of Hub id -> until
-- when (ms, the clients' clocks, which are taken to agree within a
-- Hub's linger).
-- Reads ARGV[1] (see inputs.lua). Defines listening(key, hub, ms).
-- uses fragment/inputs.lua

-- listening notes in the zset key that the Hub hub may listen for ms from
-- now. A Hub new to the zset also drops the notes that ran out, and gives
-- the zset a life of 30 times ms from then: notes are read by their
-- scores, and a steady set of Hubs keeps the zset a while.
local function listening(key, hub, ms)
  if redis.call('zadd', key, now + ms, hub) == 1 then
    redis.call('zremrangebyscore', key, '-inf', now)
    redis.call('pexpire', key, 30 * ms)
  end
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
  for _, list in ipairs({redis.call('lrange', queue, 0, -1), granted()}) do
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
    redis.call('lset', queue, 0, redisson_turn)
    redis.call('zrem', deadlines, redisson)
    redis.call('zadd', deadlines, now + life, redisson_turn)
    redis.call('set', turn, '1', 'px', yield_ms)
    turn_wait = yield_ms
    local after = redis.call('lindex', queue, 1)
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
  if waiting() and redisson_waits(n) and redis.call('lindex', queue, 0) then
    join(redisson)
  end
end
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
    local head = redis.call('lindex', queue, 0)
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
-- exact.lua: a semaphore's count stays an integer that a Lua number holds
-- exactly, at most 2^53 - 1 either way. The scripts do their sums in Lua
-- numbers (doubles): a count beyond would be stored rounded, or as
-- "1.2e+18", which neither latchkey nor Redisson reads as a count. A change
-- that would leave the range is refused before it writes anything, with an
-- error reply whose code is OVERFLOW (see lockopt.PermitsError).
-- Reads no KEYS or ARGV. Defines inexact(v) and overflow().

-- inexact reports whether the count v is beyond the range.
local function inexact(v)
  return v > 9007199254740991 or v < -9007199254740991
end

-- overflow returns the error reply of a change refused by inexact.
local function overflow()
  return redis.error_reply('OVERFLOW the count would leave -+9007199254740991, the integers a Lua number holds exactly')
end
-- sem_set.lua: change the semaphore's count (AddPermits, SetPermits,
-- TrySetPermits), handing what it frees to the waiters at the head of its
-- queue (see sem.lua).
-- KEYS[1..8] the semaphore's (see sem.lua): count, Redisson's channel,
--         queue, deadlines, grants, Hub channel prefix, listeners, turn
-- ARGV[1..5] now, PUBLISH or SPUBLISH, queue entry life, grace, counted
--         (see inputs.lua)
-- ARGV[6] add (the count goes up by ARGV[7], which may be negative), set
--         (the count becomes ARGV[7]) or tryset (the same, only if the
--         semaphore has no count yet)
-- ARGV[7] permits
-- ARGV[8] for tryset, the semaphore's TTL in ms, or 0 for none
-- Returns {v, handed}: v, for add and set, the permits available after
-- serving the queue, for tryset 1 if set, 0 if the semaphore existed;
-- handed 1 if it granted permits (see permits.lua); or an OVERFLOW
-- error, changing nothing, if the count would leave the range a Lua number
-- holds exactly (see exact.lua).
-- A change is recorded against its request (see once.lua).
-- uses fragment/replay.lua
-- uses fragment/sem.lua
-- uses fragment/permits.lua
-- uses fragment/exact.lua
local mode, n = ARGV[6], tonumber(ARGV[7])
local v = n
if mode == 'add' then
  v = get() + n
end
if inexact(v) then
  return overflow()
end
purge()
if mode == 'tryset' then
  if not try_set(count, n, ARGV[8]) then
    return {0, 0}
  end
else
  redis.call('set', count, v)
end
-- A SET drops the count's TTL, or sets it: the grants follow.
follow(grants, count)
restock()
serve(nil)
if mode == 'tryset' then
  announce(available)
  return once_record({1, handed})
end
-- Nobody can take fewer than one permit, and Redisson's listeners
-- reject a negative count.
if available > 0 then
  announce(available)
end
return once_record({available, handed})
