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
-- sem_ops.lua: the semaphore's operations on a Redisson RSemaphore count
-- and on latchkey's waiter queue beside it.
--
-- The count is Redisson's: the permits available. Latchkey's waiters queue
-- in order (Redisson clients know nothing of the queue): a waiter that
-- finds too few permits, or others waiting, joins the queue. Whatever
-- frees permits (a release, an addition, a waiter leaving the head) hands
-- them at once to the waiters at the head, in order, as far as they go: a
-- waiter for more than is left blocks those behind it. Permits handed to a
-- waiter are taken off the count, as if it had acquired them, recorded as
-- its grant, and a letter "@<key> <permits> <server clock in µs>" on the
-- channel of its client's pub/sub Hub tells it. The waiter then takes the
-- grant with its next attempt, and returns from Acquire only on that
-- attempt's answer that it was still there. A grant not taken within the
-- grace is taken back (a waiter that died costs the grace): a take that
-- comes later finds nothing, and its waiter waits on, queued again. The
-- waiter that heads the queue after a grant is told so with "@<key> next",
-- to try once the grace is over.
-- Redisson's message, the permits now available, still goes out on
-- Redisson's channel after every release.
--
-- KEYS[1] semaphore name                      string: the permits available
-- KEYS[2] redisson_sc:{name}                  Redisson's channel
-- KEYS[3] latchkey_semaphore_queue:{name}     list of waiter entries, oldest first
-- KEYS[4] latchkey_semaphore_timeout:{name}   zset: entry -> deadline (ms, client clock)
-- KEYS[5] latchkey_semaphore_grant:{name}     zset: granted entry -> end of its grace
--                                             (ms, server clock)
-- KEYS[6] latchkey_semaphore__channel:{name}  prefix of each Hub's channel, <prefix>:<hub id>
-- ARGV[1] op: acquire | try | release | dequeue | add | set | tryset
-- ARGV[2] waiter entry <hub id>/<permits>/<key>, key being its letters'
--         address; or ""
-- ARGV[3] permits: to acquire, to release, to add (may be negative) or to set
-- ARGV[4] now, in ms of the client's clock
-- ARGV[5] how long a queue entry lives unless its waiter attempts again, ms
-- ARGV[6] PUBLISH or SPUBLISH
-- ARGV[7] grace in ms: how long a grant waits to be taken
-- ARGV[8] "1" if PUBLISH (or SPUBLISH) counts every receiver of a Hub's
--         channel (a single server, or sharded pub/sub), "0" if not
-- Returns, for acquire and try: {1, available} when acquired (or its
-- grant taken); {0, rank, retry} when not: rank is the waiter's place in
-- the queue, 0 at the head (-1 for try, which never queues), and retry the
-- ms until the grace of a grant not taken yet ends, which may bring its
-- permits back to the head, or -1.
-- For release, add, set: the permits available after serving the queue.
-- For tryset: 1 if set, 0 if the semaphore existed. For dequeue: 1 if the
-- caller had been granted permits and gave them back, else 0.
-- Acquisitions and changes of the count are recorded against their request
-- (see fragment/once.lua), so a resend answers as the first run did.
-- uses fragment/once.lua
-- uses fragment/clock.lua
local count, shared, queue, deadlines, grants, procs = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local op, entry, n, now, pub = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[6]

local waiting = redis.call('exists', deadlines) == 1
local granting = redis.call('exists', grants) == 1
local available

-- need returns the permits a queue entry waits for.
local function need(e)
  return tonumber(string.match(e, '^[^/]*/(%d+)/'))
end

local function get()
  return tonumber(redis.call('get', count) or '0')
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

-- reclaim takes back the grants whose grace is over.
local function reclaim()
  if not granting then
    return
  end
  local t = millis()
  for _, e in ipairs(redis.call('zrangebyscore', grants, 0, t)) do
    redis.call('incrby', count, need(e))
  end
  redis.call('zremrangebyscore', grants, 0, t)
end

-- tell writes a letter to the waiter with queue entry e, and reports
-- whether someone may read it: false when the server counts receivers
-- (ARGV[8] is "1") and no connection heard it, so that its client is gone.
local function tell(e, body)
  local hub, key = string.match(e, '^([^/]*)/%d+/(.*)$')
  return redis.call(pub, procs .. ':' .. hub, '@' .. key .. ' ' .. body) > 0 or ARGV[8] ~= '1'
end

-- serve hands the available permits to the waiters at the head of the
-- queue, in order, as far as they go, and sets available to what is left.
-- The entry self, if reached, takes its permits itself; the others are
-- granted them and told. Waiters whose client is gone are dropped on the
-- way (8 at most, to bound the call's work). The head after a grant, or
-- after the head left (moved) or served itself, is told that it is next:
-- only the head attempts on Redisson's messages (see the Go side), and a
-- waiter learns its rank from its attempts and from that letter. Returns
-- whether self was served.
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
    elseif tell(head, string.format('%d %.0f', k, micros())) then
      available = redis.call('decrby', count, k)
      redis.call('zadd', grants, millis() + tonumber(ARGV[7]), head)
      granting, granted = true, true
    else
      dropped = dropped + 1
    end
  end
  -- The new head is next: should a grant never be taken, it tries once
  -- the grace is over, and from then on it heeds Redisson's messages.
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

-- announce publishes the permits available on Redisson's channel.
local function announce()
  redis.call(pub, shared, available)
end

if op == 'acquire' or op == 'try' then
  local done = once_replay()
  if done then
    return done
  end
  -- Granted: the grant is taken, even past its grace if nobody took it
  -- back yet. One taken back is gone: the waiter queues again.
  if granting and entry ~= '' and redis.call('zrem', grants, entry) == 1 then
    return once_record({1, get()})
  end
  purge()
  reclaim()
  local queued = waiting and redis.call('zscore', deadlines, entry)
  if serve(queued and entry or nil) then
    return once_record({1, available})
  end
  if not queued and available >= n and not (waiting and redis.call('lindex', queue, 0)) then
    return once_record({1, redis.call('decrby', count, n)})
  end
  if op == 'try' then
    return {0, -1, -1}
  end
  if redis.call('zadd', deadlines, now + tonumber(ARGV[5]), entry) == 1 then
    redis.call('rpush', queue, entry)
  end
  local rank, retry = redis.call('lpos', queue, entry), -1
  if rank == 0 and granting then
    -- Grants not taken yet may come back to the head when their grace ends.
    local first = redis.call('zrangebyscore', grants, 0, '+inf', 'withscores', 'limit', 0, 1)
    if first[2] then
      retry = math.max(tonumber(first[2]) - millis(), 0) + 1
    end
  end
  return {0, rank, retry}
end

if op == 'release' then
  local done = once_replay()
  if done then
    return done
  end
  purge()
  reclaim()
  redis.call('incrby', count, n)
  serve(nil)
  announce()
  return once_record(available)
end

if op == 'dequeue' then
  if waiting and redis.call('zrem', deadlines, entry) == 1 then
    local head = redis.call('lindex', queue, 0) == entry
    redis.call('lrem', queue, 1, entry)
    if head then
      -- Those behind it may fit in what it could not.
      purge()
      reclaim()
      serve(nil, true)
    end
    return 0
  end
  if not (granting and redis.call('zrem', grants, entry) == 1) then
    return 0 -- none, or taken back already
  end
  redis.call('incrby', count, need(entry))
  purge()
  reclaim()
  serve(nil)
  if available > 0 then
    announce()
  end
  return 1
end

if op == 'add' or op == 'set' or op == 'tryset' then
  local done = once_replay()
  if done then
    return done
  end
  purge()
  if op == 'tryset' then
    if not redis.call('set', count, n, 'nx') then
      return 0
    end
  elseif op == 'add' then
    redis.call('set', count, get() + n)
  else
    redis.call('set', count, n)
  end
  reclaim()
  serve(nil)
  if op == 'tryset' then
    announce()
    return once_record(1)
  end
  -- Nobody can take fewer than one permit, and Redisson's listeners
  -- reject a negative count.
  if available > 0 then
    announce()
  end
  return once_record(available)
end

return redis.error_reply('sem_ops: unknown op ' .. tostring(op))
