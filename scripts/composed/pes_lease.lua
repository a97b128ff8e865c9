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
-- pes.lua: the permit semaphore's KEYS, the entries of its waiter queue,
-- and its permits' leases, on a Redisson RPermitExpirableSemaphore and
-- latchkey's queue beside it.
--
-- The count and the timeout zset are Redisson's. Latchkey's waiters queue
-- in order (see queue.lua): a waiter that finds too few permits, or others
-- waiting, joins the queue. Whatever frees permits (a release, an
-- addition, expired permits coming back, a waiter leaving the head) hands
-- them at once to the waiters at the head, in order, as far as they go
-- (see permits.lua). A waiter's entry names the permits it asks for by
-- their number and the first one's id, from which the others follow (see
-- each_id), so that it is as short for many as for one; a grant acquires
-- them for it, as Redisson would (off the
-- count, into the timeout zset), with a lease of the grace, and a letter
-- "@<key> <permits> <server clock in µs>" on the channel of its client's
-- pub/sub Hub tells it. The waiter then takes the grant with its next
-- attempt, setting its own lease. A waiter that died costs the grace,
-- after which its permits expire as any others do. Redisson's messages
-- still go out on Redisson's channel, with the counts that the queue left;
-- a release that a Redisson client may wait for leaves the permits to it
-- for a moment (see yield.lua).
--
-- KEYS[1] semaphore name                      string: the permits available
-- KEYS[2] {name}:timeout                      zset: permit id (16 raw bytes) -> lease
--                                             end (ms, client clock; 922337203685477 = never)
-- KEYS[3] redisson_sc:{name}                  Redisson's channel
-- KEYS[4] latchkey_semaphore_queue:{name}     list of waiter entries, oldest first
-- KEYS[5] latchkey_semaphore_timeout:{name}   zset: entry -> deadline (ms, client clock)
-- KEYS[6] latchkey_semaphore__channel:{name}  prefix of each Hub's channel, <prefix>:<hub id>
-- KEYS[7] latchkey_semaphore_listeners:{name} zset: Hub id -> until when it may listen on
--                                             Redisson's channel (ms; see listeners.lua)
-- KEYS[8] latchkey_semaphore_turn:{name}      set while Redisson's waiters have their turn
-- (A script that only reads or sets leases takes the first three.)
-- A waiter entry is <hub id>/<permits>/<its first permit's id in hex>, the
-- id being its letters' address (see entry.lua).
-- Reads ARGV[1], ARGV[2] and ARGV[4] (see inputs.lua).
-- Defines count, timeout, shared, queue, deadlines, hubs, listeners and
-- turn (the KEYS),
-- never, each_id(first, n, f), each_of(e, f), expire(), hold(each,
-- score), hand(e), granted(), announce(n), expire_now() and restock().
-- uses fragment/inputs.lua
-- uses fragment/entry.lua
-- uses fragment/listeners.lua
-- uses fragment/lifetime.lua
local count, timeout, shared = KEYS[1], KEYS[2], KEYS[3]
local queue, deadlines, hubs = KEYS[4], KEYS[5], KEYS[6]
local listeners, turn = KEYS[7], KEYS[8]
local never = 922337203685477

-- each_id calls f with the raw id (16 bytes) of each of the n permits
-- whose first id is first: they share its first 10 bytes, and their last
-- 6, read as a big-endian number, count up from its own, modulo 2^48.
-- (permitsemaphore's Go side makes the same ids.)
local function each_id(first, n, f)
  local base = 0
  for i = 11, 16 do
    base = base * 256 + string.byte(first, i)
  end
  local head, tail = string.sub(first, 1, 10), {}
  for k = 0, n - 1 do
    local v = (base + k) % 281474976710656
    for i = 6, 1, -1 do
      tail[i] = v % 256
      v = math.floor(v / 256)
    end
    f(head .. string.char(unpack(tail)))
  end
end

-- raw_id returns the raw id that h, 32 hex characters, stands for.
local function raw_id(h)
  return (string.gsub(h, '%x%x', function(b) return string.char(tonumber(b, 16)) end))
end

-- each_of calls f with the raw id of each permit entry e waits for (see
-- entry.lua): those from its first, or those it lists.
local function each_of(e, f)
  local listed = string.match(e, '^[^/]*/(%x+)$')
  if not listed then
    local _, key = address(e)
    return each_id(raw_id(key), need(e), f)
  end
  for h in string.gmatch(listed, string.rep('%x', 32)) do
    f(raw_id(h))
  end
end

-- expire returns permits whose lease ended to the pool; it returns how
-- many, and if any, the permits available then.
local function expire()
  local n = redis.call('zremrangebyscore', timeout, '-inf', now)
  if n > 0 then
    return n, redis.call('incrby', count, n)
  end
  return 0
end

-- restock is expire: permits come back when their lease ends.
local restock = expire

-- hold acquires the permits that each, given a function, calls it with,
-- for lease end score, as Redisson does; the leases live as long as the
-- count (where Redisson copies only a TTL, and leaves one that SET dropped
-- from the count on the leases).
local function hold(each, score)
  each(function(id)
    redis.call('zadd', timeout, score, id)
  end)
  follow(timeout, count)
end

-- hand acquires entry e's permits for it, for the grace, and notes its
-- Hub among the listeners of Redisson's channel until then (see
-- yield.lua): the queue no longer shows it, and granted() does not.
local function hand(e)
  hold(function(f) each_of(e, f) end, now + grace)
  listening(listeners, (address(e)), grace)
end

-- granted returns no entries: a grant is permits held (see hand).
local function granted()
  return {}
end

-- announce publishes n on Redisson's channel if it is positive (nobody
-- can take fewer than one permit, and Redisson's listeners reject a
-- negative count), and returns how many clients heard it, or nil if it
-- published nothing.
local function announce(n)
  if n > 0 then
    return redis.call(pub, shared, n)
  end
end

-- expire_now returns permits whose lease ended to the pool, and publishes
-- the permits then available if any came back.
local function expire_now()
  local n, available = expire()
  if n > 0 then
    announce(available)
  end
end
-- pes_lease.lua: read or reset the lease of one permit of a Redisson
-- RPermitExpirableSemaphore (getLeaseTime, updateLeaseTime).
-- KEYS[1..3] the permit semaphore's first three (see pes.lua): count,
--         timeout zset, Redisson's channel
-- ARGV[1..5] now, PUBLISH or SPUBLISH, queue entry life, grace, counted
--         (see inputs.lua)
-- ARGV[6] permit id (16 raw bytes)
-- ARGV[7] the new lease end (or 922337203685477), or "" to only read it
-- Expired permits first return to the pool (the new count is published if
-- positive). Returns -2 if the permit is not held (unknown, released or
-- expired), -1 if it has no lease, else the ms left of its lease (after
-- the update, if any).
-- uses fragment/pes.lua
expire_now()
local score = redis.call('zscore', timeout, ARGV[6])
if not score then
  return -2
end
if ARGV[7] ~= '' then
  score = ARGV[7]
  redis.call('zadd', timeout, score, ARGV[6])
end
score = tonumber(score)
if score >= never then
  return -1
end
return score - now
