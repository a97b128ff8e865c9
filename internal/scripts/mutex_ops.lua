-- mutex_ops.lua: the mutex's operations on a Redisson RLock hash and on
-- latchkey's waiter queue beside it.
--
-- Mutual exclusion is the hash's, exactly as Redisson's; the queue decides
-- who is told first. A waiter that finds the lock held joins the queue and
-- learns its rank. A release publishes "0" on the shared Redisson channel,
-- as Redisson does, and "0" on the channel of the pub/sub Hub (one per
-- client) whose waiter heads the queue, so that the waiters of other
-- clients need not all try at once; and it keeps the free lock for that
-- waiter for a short grace, so that a latchkey newcomer queues up rather
-- than take its turn. Redisson clients know nothing of the queue or the
-- grace, and a dead or slow first waiter costs at most the grace. Entries
-- whose deadline passed are purged by every call; every attempt refreshes
-- its own.
--
-- KEYS[1] lock hash name                  {owner = hold count}
-- KEYS[2] redisson_lock_token:{name}      fencing counter (RFencedLock layout)
-- KEYS[3] latchkey_lock_queue:{name}      list of waiter entries, oldest first
-- KEYS[4] latchkey_lock_timeout:{name}    zset: waiter entry -> deadline (ms)
-- KEYS[5] redisson_lock__channel:{name}   the shared unlock channel
-- KEYS[6] latchkey_lock__channel:{name}   prefix of each Hub's channel,
--                                         <prefix>:<hub id>
-- KEYS[7] latchkey_lock_grant:{name}      the entry the free lock is kept
--                                         for, for ARGV[9] ms after a release
-- ARGV[1] op: acquire | try | release | dequeue | force
-- ARGV[2] owner id <uuid>:<n>
-- ARGV[3] waiter entry <hub id>/<owner id>
-- ARGV[4] lease in ms
-- ARGV[5] "1": the owner may re-enter; "0": the id is fresh for this one
--         acquisition, so finding it present means a resent request that was
--         applied before, which succeeds again without a second hold
-- ARGV[6] now, in ms of the client's clock
-- ARGV[7] how long a queue entry lives unless its waiter attempts again, ms
-- ARGV[8] PUBLISH or SPUBLISH
-- ARGV[9] grace in ms: how long a release keeps the lock for the waiter it
--         tells, so that a newcomer does not take its turn
-- Returns, for acquire and try: {1, token, 0} when acquired or re-entered
-- (the TTL is reset to the lease); {0, pttl, rank} when held by another owner
-- (pttl is -1 if the key has no TTL; while the free lock is kept for
-- another waiter, it is what is left of that grace; rank is the waiter's
-- place in the queue, 0 at the head, or -1 for try, which never queues).
-- For release: -1 if the owner holds nothing, 0 if holds remain, 1 if
-- released. For dequeue: 0. For force: 1 if the lock existed, else 0.
-- An acquisition by an owner that may re-enter, and a release, are recorded
-- against their request (see prelude/once.lua), so a resend answers as the
-- first run did.
-- uses prelude/once.lua
local lock, token, queue, deadlines, shared, procs, grant = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local op, owner, entry, now, pub = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[6]), ARGV[8]

-- Nobody waits (the fast path): the queue's keys do not exist.
local waiting = redis.call('exists', deadlines) == 1

local function purge()
  if not waiting then
    return
  end
  for _, e in ipairs(redis.call('zrangebyscore', deadlines, '-inf', now)) do
    redis.call('lrem', queue, 1, e)
    redis.call('zrem', deadlines, e)
  end
end

-- leave takes the caller's entry out of the queue; true if it was the head.
local function leave()
  if not waiting or redis.call('zrem', deadlines, entry) == 0 then
    return false
  end
  local head = redis.call('lindex', queue, 0) == entry
  redis.call('lrem', queue, 1, entry)
  return head
end

-- wakeHead tells the first waiter in line that the lock is free, and keeps
-- it for that waiter for the grace time.
local function wakeHead()
  if not waiting then
    return
  end
  local head = redis.call('lindex', queue, 0)
  if head then
    redis.call('set', grant, head, 'PX', ARGV[9])
    redis.call(pub, procs .. ':' .. string.match(head, '^[^/]*'), '0')
  end
end

-- queued returns the reply of an attempt that did not acquire, after
-- joining the queue (refreshing its deadline) unless op is try.
local function queued(wait)
  if op == 'try' then
    return {0, wait, -1}
  end
  if redis.call('zadd', deadlines, now + tonumber(ARGV[7]), entry) == 1 then
    redis.call('rpush', queue, entry)
  end
  waiting = true
  return {0, wait, redis.call('lpos', queue, entry)}
end

-- fence returns the next fencing token. A counter that is missing (new,
-- or lost to a restart without persistence) starts from the server's clock
-- in microseconds, above any token it can have handed out before.
local function fence()
  local t = redis.call('incr', token)
  if t == 1 then
    local now = redis.call('time')
    t = tonumber(now[1]) * 1000000 + tonumber(now[2])
    redis.call('set', token, t)
  end
  return t
end

if op == 'acquire' or op == 'try' then
  if ARGV[5] == '1' then
    local done = once_replay()
    if done then
      return done
    end
  end
  purge()
  if redis.call('exists', lock) == 1 then
    if not redis.call('hget', lock, owner) then
      return queued(redis.call('pttl', lock))
    end
    if ARGV[5] == '0' then
      leave()
      return {1, tonumber(redis.call('get', token) or '0'), 0}
    end
  elseif waiting then -- a grant is only ever made to a queued waiter
    local kept = redis.call('get', grant)
    if kept and kept ~= entry then
      return queued(redis.call('pttl', grant))
    end
    if kept then
      redis.call('del', grant)
    end
  end
  leave()
  redis.call('hincrby', lock, owner, 1)
  redis.call('pexpire', lock, ARGV[4])
  return once_record({1, fence(), 0})
end

if op == 'release' then
  if ARGV[5] == '1' then
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
  redis.call('del', lock)
  redis.call(pub, shared, '0')
  purge()
  wakeHead()
  return once_record(1)
end

if op == 'dequeue' then
  if leave() and redis.call('exists', lock) == 0 then
    wakeHead()
  end
  return 0
end

if op == 'force' then
  if redis.call('del', lock) == 0 then
    return 0
  end
  redis.call(pub, shared, '0')
  purge()
  wakeHead()
  return 1
end

return redis.error_reply('mutex_ops: unknown op ' .. tostring(op))
