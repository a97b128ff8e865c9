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
-- (see permits.lua). A waiter's entry carries the ids of the permits it
-- asks for; a grant acquires them for it, as Redisson would (off the
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
-- A waiter entry is <hub id>/<its permits' ids in hex>, the first id
-- being its letters' address.
-- Reads ARGV[1], ARGV[2] and ARGV[4] (see inputs.lua).
-- Defines count, timeout, shared, queue, deadlines, hubs, listeners and
-- turn (the KEYS),
-- never, ids(e), need(e), address(e), expire(), hold(list, score),
-- hand(e), granted(), announce(n), expire_now() and restock().
-- uses fragment/inputs.lua
-- uses fragment/listeners.lua
-- uses fragment/lifetime.lua
local count, timeout, shared = KEYS[1], KEYS[2], KEYS[3]
local queue, deadlines, hubs = KEYS[4], KEYS[5], KEYS[6]
local listeners, turn = KEYS[7], KEYS[8]
local never = 922337203685477

-- ids returns the raw ids of entry e.
local function ids(e)
  local out = {}
  for h in string.gmatch(string.match(e, '/(%x+)$'), '%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x') do
    out[#out + 1] = (string.gsub(h, '%x%x', function(b) return string.char(tonumber(b, 16)) end))
  end
  return out
end

-- need returns how many permits entry e asks for.
local function need(e)
  return #string.match(e, '/(%x+)$') / 32
end

-- address returns the Hub id and the letter key of entry e.
local function address(e)
  return string.match(e, '^([^/]*)/(' .. string.rep('%x', 32) .. ')')
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

-- hold acquires the permits list for lease end score, as Redisson does;
-- the leases live as long as the count (where Redisson copies only a TTL,
-- and leaves one that SET dropped from the count on the leases).
local function hold(list, score)
  for _, id in ipairs(list) do
    redis.call('zadd', timeout, score, id)
  end
  follow(timeout, count)
end

-- hand acquires entry e's permits for it, for the grace, and notes its
-- Hub among the listeners of Redisson's channel until then (see
-- yield.lua): the queue no longer shows it, and granted() does not.
local function hand(e)
  hold(ids(e), now + grace)
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
-- pes_count.lua: count the permits of a Redisson RPermitExpirableSemaphore
-- (availablePermits, acquiredPermits, getPermits).
-- KEYS[1..3] the permit semaphore's first three (see pes.lua): count,
--         timeout zset, Redisson's channel
-- ARGV[1..5] now, PUBLISH or SPUBLISH, queue entry life, grace, counted
--         (see inputs.lua)
-- Expired permits first return to the pool (the new count is published if
-- positive, which wakes latchkey's waiters as Redisson's). Returns
-- {available, held}; permits granted to a waiter count as held.
-- uses fragment/pes.lua
expire_now()
return {tonumber(redis.call('get', count) or '0'), redis.call('zcard', timeout)}
