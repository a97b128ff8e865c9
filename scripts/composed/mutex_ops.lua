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
-- mutex_ops.lua: the mutex's operations on a Redisson RLock hash and on
-- latchkey's waiter queue beside it.
--
-- Mutual exclusion is the hash's, exactly as Redisson's; the queue decides
-- who is next. A waiter that finds the lock held joins the queue and
-- learns its rank. A release publishes "0" on the shared Redisson channel,
-- as Redisson does, and grants the lock to the waiter at the head of the
-- queue in the same call: that waiter becomes the holder (its owner field,
-- count 1, a fresh fencing token) with a lease of the grace only, and a
-- letter "@<key> <token>" on the channel of its client's pub/sub Hub tells
-- it, so that it returns from Lock without another round trip. The waiter
-- then extends the lease to its own (or, having given up, gives the lock
-- back); one that died or missed the letter costs at most the grace.
-- Redisson clients know nothing of the queue: to them the lock is held by
-- an ordinary owner. Entries whose deadline passed are purged by every
-- call; every attempt refreshes its own.
--
-- KEYS[1] lock hash name                  {owner = hold count}
-- KEYS[2] redisson_lock_token:{name}      fencing counter (RFencedLock layout)
-- KEYS[3] latchkey_lock_queue:{name}      list of waiter entries, oldest first
-- KEYS[4] latchkey_lock_timeout:{name}    zset: waiter entry -> deadline (ms)
-- KEYS[5] redisson_lock__channel:{name}   the shared unlock channel
-- KEYS[6] latchkey_lock__channel:{name}   prefix of each Hub's channel,
--                                         <prefix>:<hub id>
-- KEYS[7] latchkey_lock_grant:{name}      the entry the lock was granted
--                                         to, until it takes the grant
-- ARGV[1] op: acquire | try | release | dequeue | force
-- ARGV[2] owner id <uuid>:<n>
-- ARGV[3] waiter entry <hub id>/<key>, where key, the letter's address, is
--         the owner id, followed by /<call id> for an owner that may
--         re-enter (one owner may wait in two calls)
-- ARGV[4] lease in ms
-- ARGV[5] "1": the owner may re-enter; "2": it may, and holds the lock
--         through the caller's handle, so that a grant to it was taken by
--         the Lock this re-enters; "0": the id is fresh for this one
--         acquisition, so finding it present means a resent request that
--         was applied before, or a grant, which succeeds again without a
--         second hold
-- ARGV[6] now, in ms of the client's clock
-- ARGV[7] how long a queue entry lives unless its waiter attempts again, ms
-- ARGV[8] PUBLISH or SPUBLISH
-- ARGV[9] grace in ms: the lease of a granted hold until its waiter takes it
-- ARGV[10] "1" if PUBLISH (or SPUBLISH) counts every receiver of a Hub's
--         channel (a single server, or sharded pub/sub), "0" if not (a
--         cluster's PUBLISH counts only the node's own)
-- ARGV[11] (acquire, try) "1" if an earlier attempt of the call may have
--         queued it: a caller that never queued takes a free lock without
--         a look at the queue (the fast path)
-- Returns, for acquire and try: {1, token, n} when acquired, re-entered or
-- found granted (the TTL is reset to the lease), n being the owner's holds; {0, pttl, rank, foreign,
-- now} when held by another owner (pttl is -1 if the key has no TTL; rank
-- is the waiter's place in the queue, 0 at the head, or -1 for try, which
-- never queues; foreign is 1 if the holder is not a latchkey owner, whose
-- release will not grant; now is the server's clock in µs, against which
-- the waiter dates a grant's letter). A grant's letter is
-- "@<key> <token> <server clock in µs>"; a waiter that heads the queue
-- after a grant is told so with "@<key> next".
-- For release: -1 if the owner holds nothing, 0 if holds remain, 1 if
-- released. For dequeue: 1 if the caller had been granted the lock and
-- gave it back, else 0. For force: 1 if the lock existed, else 0.
-- An acquisition by an owner that may re-enter, and a release, are recorded
-- against their request (see fragment/once.lua), so a resend answers as the
-- first run did.
-- uses fragment/once.lua
local lock, token, queue, deadlines, shared, procs, grant = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local op, owner, entry, now, pub = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[6]), ARGV[8]

-- waiting reports whether anyone waits: whether the queue's keys exist.
-- It is asked only off the fast path, where a free lock is taken by a
-- caller that never queued (ARGV[11]).
local known
local function waiting()
  if known == nil then
    known = redis.call('exists', deadlines) == 1
  end
  return known
end

local function purge()
  if not waiting() then
    return
  end
  for _, e in ipairs(redis.call('zrangebyscore', deadlines, '-inf', now)) do
    redis.call('lrem', queue, 1, e)
    redis.call('zrem', deadlines, e)
  end
end

-- leave takes the caller's entry out of the queue; true if it was the head.
local function leave()
  if not waiting() or redis.call('zrem', deadlines, entry) == 0 then
    return false
  end
  local head = redis.call('lindex', queue, 0) == entry
  redis.call('lrem', queue, 1, entry)
  return head
end

-- micros returns the server's clock in microseconds.
local function micros()
  local t = redis.call('time')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end

-- fence returns the next fencing token. A counter that is missing (new,
-- or lost to a restart without persistence) starts from the server's clock
-- in microseconds, above any token it can have handed out before.
local function fence()
  local t = redis.call('incr', token)
  if t == 1 then
    t = micros()
    redis.call('set', token, t)
  end
  return t
end

-- tell writes a letter to the waiter with queue entry e, and reports
-- whether someone may read it: false when the server counts receivers
-- (ARGV[10] is "1") and no connection heard it, so that the waiter's
-- client is gone.
local function tell(e, body)
  local hub, key = string.match(e, '^([^/]*)/(.*)$')
  return redis.call(pub, procs .. ':' .. hub, '@' .. key .. ' ' .. body) > 0 or ARGV[10] ~= '1'
end

-- grantHead makes the first waiter in line the holder of the free lock,
-- for the grace time, and writes it a letter with its token and the
-- server's clock. Waiters whose client is gone are dropped on the way (a
-- few at most per call, to bound its work: the next release drops more).
local function grantHead()
  if not waiting() then
    return
  end
  for _ = 1, 8 do
    local head = redis.call('lpop', queue)
    if not head then
      return
    end
    redis.call('zrem', deadlines, head)
    if tell(head, string.format('%.0f %.0f', fence(), micros())) then
      redis.call('hset', lock, string.match(head, '^[^/]*/([^/]*)'), 1)
      redis.call('pexpire', lock, ARGV[9])
      redis.call('set', grant, head, 'PX', ARGV[9])
      break
    end
  end
  -- The new head is next: should the grant never be taken, it tries once
  -- the grace is over.
  for _ = 1, 8 do
    local next = redis.call('lindex', queue, 0)
    if not next or tell(next, 'next') then
      return
    end
    redis.call('lpop', queue)
    redis.call('zrem', deadlines, next)
  end
end

-- free deletes the lock, and any grant of it not taken: Redisson's
-- waiters are told, and the next latchkey waiter is granted the lock.
local function free()
  redis.call('del', lock, grant)
  redis.call(pub, shared, '0')
  purge()
  grantHead()
end

-- foreign reports whether the holder's owner id is not one latchkey
-- makes (a version 8 UUID, then ':'): its release will grant nothing, and
-- only Redisson's channel will say that the lock is free.
local function foreign()
  local f = redis.call('hkeys', lock)[1] or ''
  if string.sub(f, 15, 15) == '8' and string.sub(f, 37, 37) == ':' then
    return 0
  end
  return 1
end

-- queued returns the reply of an attempt that did not acquire, after
-- joining the queue (refreshing its deadline) unless op is try.
local function queued(wait)
  if op == 'try' then
    return {0, wait, -1, 0}
  end
  if redis.call('zadd', deadlines, now + tonumber(ARGV[7]), entry) == 1 then
    redis.call('rpush', queue, entry)
  end
  known = true
  return {0, wait, redis.call('lpos', queue, entry), foreign(), micros()}
end

if op == 'acquire' or op == 'try' then
  if ARGV[5] ~= '0' then
    local done = once_replay()
    if done then
      return done
    end
  end
  if redis.call('exists', lock) == 1 then
    if not redis.call('hget', lock, owner) then
      purge()
      return queued(redis.call('pttl', lock))
    end
    -- Held by the owner: granted to this call by a release (its letter not
    -- read yet), or to an earlier call of the owner that gave up without
    -- a word (its entry stayed queued), unless the owner holds the lock
    -- through this handle, which took that grant; or, for a fresh id,
    -- acquired by an earlier send of this request. Each is taken as it is,
    -- and not counted twice.
    local g = redis.call('get', grant)
    local mine = g and string.match(g, '^[^/]*/([^/]*)') == owner
    if mine and ARGV[5] == '2' then
      redis.call('del', grant) -- the Lock this re-enters took it
    elseif ARGV[5] == '0' or mine then
      leave()
      if mine then
        redis.call('del', grant)
      end
      redis.call('pexpire', lock, ARGV[4])
      local r = {1, tonumber(redis.call('get', token) or '0'), tonumber(redis.call('hget', lock, owner))}
      if ARGV[5] ~= '0' then
        return once_record(r)
      end
      return r
    end
  end
  if ARGV[11] == '1' then
    leave()
  end
  local n = redis.call('hincrby', lock, owner, 1)
  redis.call('pexpire', lock, ARGV[4])
  return once_record({1, fence(), n})
end

if op == 'release' then
  if ARGV[5] ~= '0' then
    local done = once_replay()
    if done then
      return done
    end
  end
  local n = redis.call('hincrby', lock, owner, -1)
  if n > 0 then
    redis.call('pexpire', lock, ARGV[4])
    return once_record(0)
  end
  if n < 0 then
    -- Not an owner: take back the field the decrement made. The hash, and
    -- the TTL of a hash another owner holds, are as they were. A fresh id
    -- holds once, so this is where a resend of its release lands.
    redis.call('hdel', lock, owner)
    return once_replay() or -1
  end
  free()
  return once_record(1)
end

if op == 'dequeue' then
  if leave() then
    if redis.call('exists', lock) == 0 then
      purge()
      grantHead()
    end
    return 0
  end
  if redis.call('get', grant) ~= entry then
    return 0
  end
  -- Granted after the waiter gave up: give the lock back at once.
  free()
  return 1
end

if op == 'force' then
  if redis.call('exists', lock) == 0 then
    return 0
  end
  free()
  return 1
end

return redis.error_reply('mutex_ops: unknown op ' .. tostring(op))
