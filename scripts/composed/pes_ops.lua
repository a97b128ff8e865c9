-- once.lua: the request record, so that a request sent twice (go-redis
-- resends a command whose reply was lost) is applied once and answered the
-- same way both times.
--
-- Reads the last of KEYS and of ARGV, which the runner appends to those
-- the script declares, and takes them off again, so the script sees its
-- KEYS and ARGV as its header describes them:
-- KEYS[#KEYS] latchkey_once:{name}:<request id>, the record of this request
-- ARGV[#ARGV] how long the record lives, in ms; 0 when repeating the
--             request is harmless, and then nothing is read or written;
--             negative to resolve a request its caller gave up on (below)
-- A record holds the reply: "n<integer>" or "a<integer>,<integer>,...", or
-- "x" for a request cancelled before it applied.
-- Defines once_replay() and once_record(reply); a request to resolve is
-- answered here, and the script does not run.
local once_key = table.remove(KEYS)
local once_ttl = tonumber(table.remove(ARGV))

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
-- pes_ops.lua: the permit semaphore's operations on a Redisson
-- RPermitExpirableSemaphore and on latchkey's waiter queue beside it.
--
-- The count and the timeout zset are Redisson's. Latchkey's waiters queue
-- in order (Redisson clients know nothing of the queue): a waiter that
-- finds too few permits, or others waiting, joins the queue. Whatever
-- frees permits (a release, an addition, expired permits coming back, a
-- waiter leaving the head) hands them at once to the waiters at the head,
-- in order, as far as they go: a waiter for more than is left blocks those
-- behind it. A waiter's entry carries the ids of the permits it asks for;
-- a grant acquires them for it, as Redisson would (off the count, into the
-- timeout zset), with a lease of the grace, and a letter
-- "@<key> <permits> <server clock in µs>" on the channel of its client's
-- pub/sub Hub tells it. The waiter then takes the grant with its next
-- attempt, setting its own lease, and returns from Acquire only on that
-- attempt's answer that the permits were still held for it. A waiter that
-- died costs the grace, after which its permits expire as any others do;
-- a take that comes later finds nothing, and its waiter waits on, queued
-- again. The waiter that heads the queue after a grant is told so with
-- "@<key> next", to try once the grace is over. Redisson's messages still
-- go out on Redisson's channel, with the counts that the queue left.
--
-- KEYS[1] semaphore name                      string: the permits available
-- KEYS[2] {name}:timeout                      zset: permit id (16 raw bytes) -> lease
--                                             end (ms, client clock; 922337203685477 = never)
-- KEYS[3] redisson_sc:{name}                  Redisson's channel
-- KEYS[4] latchkey_semaphore_queue:{name}     list of waiter entries, oldest first
-- KEYS[5] latchkey_semaphore_timeout:{name}   zset: entry -> deadline (ms, client clock)
-- KEYS[6] latchkey_semaphore__channel:{name}  prefix of each Hub's channel, <prefix>:<hub id>
-- ARGV[1] op: acquire | try | release | dequeue | add | set | tryset
-- ARGV[2] now, ms since the epoch (client clock)
-- ARGV[3] PUBLISH or SPUBLISH
-- ARGV[4] how long a queue entry lives unless its waiter attempts again, ms
-- ARGV[5] grace in ms: the lease of granted permits until taken
-- ARGV[6] "1" if PUBLISH (or SPUBLISH) counts every receiver of a Hub's
--         channel (a single server, or sharded pub/sub), "0" if not
-- ARGV[7] waiter entry <hub id>/<its permits' ids in hex>, the first id
--         being its letters' address; or ""
-- ARGV[8] acquire, try: the lease end of the permits (or
--         922337203685477); release: "1" all or nothing, "0" whichever
--         are held; add: the number to add; set: the total; tryset: the
--         permits
-- ARGV[9..] acquire, try, release: permit ids (16 raw bytes each)
-- Returns, for acquire and try: {1, 0} when acquired (or its grant taken);
-- {0, ms, rank} when not: ms until the earliest lease ends for the head of
-- the queue (-1 if no held permit has a lease, and for the others), rank
-- the waiter's place in the queue (-1 for try, which never queues);
-- {-1, total} when the semaphore exists but has fewer permits in all than
-- asked for (nothing changes). For release: how many were released. For
-- dequeue: 1 if the caller had been granted permits and gave them back.
-- For add and set: {available, held}. For tryset: 1 if set, 0 if the
-- semaphore existed.
-- Acquisitions, releases and changes of the count are recorded against
-- their request (see fragment/once.lua).
-- uses fragment/once.lua
-- uses fragment/clock.lua
local count, timeout, shared, queue, deadlines, procs = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local op, now, pub, entry, arg = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[7], ARGV[8]
local never = 922337203685477

local waiting = redis.call('exists', deadlines) == 1
local available

local function get()
  return tonumber(redis.call('get', count) or '0')
end

-- ids returns the raw ids of a queue entry.
local function ids(e)
  local out = {}
  for h in string.gmatch(string.match(e, '/(%x+)$'), '%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x') do
    out[#out + 1] = (string.gsub(h, '%x%x', function(b) return string.char(tonumber(b, 16)) end))
  end
  return out
end

-- need returns how many permits a queue entry asks for.
local function need(e)
  return #string.match(e, '/(%x+)$') / 32
end

-- expire returns permits whose lease ended to the pool; returns how many.
local function expire()
  local n = redis.call('zremrangebyscore', timeout, '-inf', now)
  if n > 0 then
    redis.call('incrby', count, n)
  end
  return n
end

local function purge()
  if not waiting then
    return
  end
  for _, e in ipairs(redis.call('zrangebyscore', deadlines, '-inf', now)) do
    redis.call('lrem', queue, 1, e)
    redis.call('zrem', deadlines, e)
  end
end

-- hold acquires the permits list for lease end score, as Redisson does.
local function hold(list, score)
  for _, id in ipairs(list) do
    redis.call('zadd', timeout, score, id)
  end
  local ttl = redis.call('pttl', count)
  if ttl > 0 then
    redis.call('pexpire', timeout, ttl)
  end
end

-- tell writes a letter to the waiter with queue entry e, and reports
-- whether someone may read it: false when the server counts receivers
-- (ARGV[6] is "1") and no connection heard it, so that its client is gone.
local function tell(e, body)
  local hub, key = string.match(e, '^([^/]*)/(' .. string.rep('%x', 32) .. ')')
  return redis.call(pub, procs .. ':' .. hub, '@' .. key .. ' ' .. body) > 0 or ARGV[6] ~= '1'
end

-- serve hands the available permits to the waiters at the head of the
-- queue, in order, as far as they go, and sets available to what is left.
-- The caller's entry, if reached, takes its permits (ARGV[9..]) with its
-- own lease (ARGV[8]); the others are granted theirs for the grace and
-- told. Waiters whose client is gone are dropped on the way (8 at most, to
-- bound the call's work). The head after a grant, or after the head left
-- (moved) or served itself, is told that it is next: only the head
-- attempts on Redisson's messages (see the Go side), and a waiter learns
-- its rank from its attempts and from that letter. Returns whether the
-- caller was served.
local function serve(self, moved)
  available = get()
  if not waiting then
    return false
  end
  local served, granted, dropped = false, false, 0
  while dropped < 8 do
    local head = redis.call('lindex', queue, 0)
    if not head then
      break
    end
    local k = need(head)
    if k > available then
      break
    end
    redis.call('lpop', queue)
    redis.call('zrem', deadlines, head)
    if head == self then
      served, moved = true, true
      available = redis.call('decrby', count, k)
      hold({unpack(ARGV, 9)}, arg)
    elseif tell(head, string.format('%d %.0f', k, micros())) then
      available = redis.call('decrby', count, k)
      hold(ids(head), now + tonumber(ARGV[5]))
      granted = true
    else
      dropped = dropped + 1
    end
  end
  -- The new head is next: should a grant never be taken, it tries once
  -- the grace is over, when the permits expire, and from then on it
  -- heeds Redisson's messages.
  while (granted or moved) and dropped < 8 do
    local head = redis.call('lindex', queue, 0)
    if not head or tell(head, 'next') then
      break
    end
    redis.call('lpop', queue)
    redis.call('zrem', deadlines, head)
    dropped = dropped + 1
  end
  return served
end

-- announce publishes n on Redisson's channel if it is positive: nobody
-- can take fewer than one permit, and Redisson's listeners reject a
-- negative count.
local function announce(n)
  if n > 0 then
    redis.call(pub, shared, n)
  end
end

if op == 'acquire' or op == 'try' then
  local done = once_replay()
  if done then
    return done
  end
  -- Granted: the grant is taken with the caller's lease, even past its
  -- grace if its permits did not expire yet. One that expired is gone.
  if redis.call('zscore', timeout, ARGV[9]) then
    for i = 9, #ARGV do
      redis.call('zadd', timeout, 'xx', arg, ARGV[i])
    end
    return once_record({1, 0})
  end
  local expired = expire()
  purge()
  local queued = waiting and redis.call('zscore', deadlines, entry)
  local n = #ARGV - 8
  if serve(queued and entry or nil) then
    if expired > 0 then
      announce(available)
    end
    return once_record({1, 0})
  end
  local total = available + redis.call('zcard', timeout)
  if total < n and redis.call('exists', count) == 1 then
    if expired > 0 then
      announce(available)
    end
    return {-1, total}
  end
  if not queued and available >= n and not (waiting and redis.call('lindex', queue, 0)) then
    available = redis.call('decrby', count, n)
    hold({unpack(ARGV, 9)}, arg)
    if expired > 0 then
      announce(available)
    end
    return once_record({1, 0})
  end
  if expired > 0 then
    announce(available)
  end
  local rank = -1
  if op == 'acquire' then
    if redis.call('zadd', deadlines, now + tonumber(ARGV[4]), entry) == 1 then
      redis.call('rpush', queue, entry)
    end
    rank = redis.call('lpos', queue, entry)
  end
  local wait = -1
  if rank <= 0 then
    -- Only the head (or a single attempt) waits for a lease to end: it
    -- takes the expired permits back, and hands on what it does not need.
    local first = redis.call('zrange', timeout, 0, 0, 'withscores')
    if first[2] and tonumber(first[2]) < never then
      wait = math.max(tonumber(first[2]) - now, 0)
    end
  end
  return {0, wait, rank}
end

if op == 'release' then
  local done = once_replay()
  if done then
    return done
  end
  expire()
  purge()
  if arg == '1' then
    for i = 9, #ARGV do
      if not redis.call('zscore', timeout, ARGV[i]) then
        return 0
      end
    end
  end
  local released = 0
  for i = 9, #ARGV do
    released = released + redis.call('zrem', timeout, ARGV[i])
  end
  if released == 0 then
    return 0
  end
  redis.call('incrby', count, released)
  serve(nil)
  -- Redisson publishes the new count after releasing one permit, and the
  -- number released after releasing several: what the queue left of it.
  if released > 1 then
    announce(math.min(released, available))
  else
    announce(available)
  end
  return once_record(released)
end

if op == 'dequeue' then
  if waiting and redis.call('zrem', deadlines, entry) == 1 then
    local head = redis.call('lindex', queue, 0) == entry
    redis.call('lrem', queue, 1, entry)
    if head then
      -- Those behind it may fit in what it could not.
      expire()
      purge()
      serve(nil, true)
    end
    return 0
  end
  -- Granted meanwhile: the permits are given back, unless they expired.
  local back = 0
  for _, id in ipairs(ids(entry)) do
    back = back + redis.call('zrem', timeout, id)
  end
  if back == 0 then
    return 0
  end
  redis.call('incrby', count, back)
  expire()
  purge()
  serve(nil)
  announce(available)
  return 1
end

if op == 'add' or op == 'set' or op == 'tryset' then
  local done = once_replay()
  if done then
    return done
  end
  if op == 'tryset' then
    if not redis.call('set', count, arg, 'nx') then
      return 0
    end
  end
  expire()
  purge()
  local held = redis.call('zcard', timeout)
  if op == 'add' then
    redis.call('incrby', count, arg)
  elseif op == 'set' then
    redis.call('set', count, tonumber(arg) - held)
  end
  serve(nil)
  if op == 'tryset' then
    announce(available)
    return once_record(1)
  end
  -- Redisson publishes the number added, or the new total: what the queue
  -- left of it.
  if tonumber(arg) > 0 then
    announce(math.min(tonumber(arg), available))
  end
  return once_record({available, redis.call('zcard', timeout)})
end

return redis.error_reply('pes_ops: unknown op ' .. tostring(op))
