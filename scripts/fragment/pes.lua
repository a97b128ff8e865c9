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
-- uses fragment/numbers.lua
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
