-- fairlock_ops.lua: every operation on a Redisson fair lock (RFairLock).
-- One script serves them all because they share the queue upkeep below, and
-- Lua scripts cannot include one another.
--
-- KEYS[1] lock hash N                 {owner = hold count}, TTL = lease
-- KEYS[2] redisson_lock_queue:{N}     list of waiting owners, in arrival order
-- KEYS[3] redisson_lock_timeout:{N}   zset owner -> deadline, client clock ms
-- KEYS[4] redisson_lock__channel:{N}  a waiter's own channel is KEYS[4]:<owner>
-- ARGV[1] the operation: acquire, try, release, dequeue or force
-- ARGV[2] owner id <uuid>:<n> ("" for force)
-- ARGV[3] now, client wall clock in ms
-- ARGV[4] PUBLISH or SPUBLISH
-- ARGV[5] lease in ms (acquire, try, release)
-- ARGV[6] wait timeout in ms (acquire, try): a live waiter's deadline is
--         now + this, renewed by each of its attempts
-- ARGV[7] (acquire, try) "1": the owner may re-enter (its count goes up);
--         "0": the id is fresh for this one acquisition, so finding it
--         already holding means this is a resent request that was applied
--         before: it succeeds again without a second hold.
--
-- Upkeep, first: a queued caller of acquire or try renews its own deadline;
-- then every waiter whose deadline has passed leaves the queue, and so does a
-- head without a deadline (left by a partial clean-up). Whenever the head
-- changes other than by taking the lock, the new head is sent "0" on its own
-- channel, so that it tries at once (the lock may be free) or sleeps on the
-- holder's TTL; when it changes by the head taking the lock, the new head is
-- woken only if the lease is shorter than its heartbeat (see below). Nothing
-- else is ever shifted: a deadline belongs to its waiter.
--
-- Returns:
--   acquire, try  {1, 0} when acquired or re-entered (TTL reset to the lease);
--                 {0, ms} when not: ms >= 1 is the longest the caller may
--                 sleep before its next attempt. acquire queues the caller at
--                 the tail if it is not queued; try leaves no trace.
--   release       -1 if the owner does not hold the lock (if the lock is free
--                 the head is woken anyway, as Redisson's unlock does), 0 if
--                 holds remain (TTL reset), 1 if released (key deleted, head
--                 woken).
--   dequeue       1 if the owner was queued and is removed, 0 otherwise.
--   force         1 if the lock existed (deleted, head woken), 0 otherwise.
local op, owner, now = ARGV[1], ARGV[2], tonumber(ARGV[3])
local lock, queue, zset = KEYS[1], KEYS[2], KEYS[3]

local woken
local function wake(who)
  if who and who ~= woken and who ~= owner then
    redis.call(ARGV[4], KEYS[4] .. ':' .. who, '0')
    woken = who
  end
end

local queued = false
if op == 'acquire' or op == 'try' then
  queued = redis.call('lpos', queue, owner) ~= false
  if queued then
    redis.call('zadd', zset, now + tonumber(ARGV[6]), owner)
  end
end
local before = redis.call('lindex', queue, 0)
local removed = 0
if op == 'dequeue' then
  removed = math.min(redis.call('lrem', queue, 0, owner), 1)
  redis.call('zrem', zset, owner)
end

local stale = redis.call('zrangebyscore', zset, '-inf', now)
for _, w in ipairs(stale) do
  redis.call('lrem', queue, 0, w)
end
if #stale > 0 then
  redis.call('zremrangebyscore', zset, '-inf', now)
end
local head = redis.call('lindex', queue, 0)
while head and not redis.call('zscore', zset, head) do
  redis.call('lpop', queue)
  head = redis.call('lindex', queue, 0)
end
if head ~= before then
  wake(head)
end

if op == 'acquire' or op == 'try' then
  local wt = tonumber(ARGV[6])
  -- The heartbeat: a waiter tries again within a third of the wait timeout,
  -- which renews its deadline well before others may skip it.
  local beat = math.max(math.floor(wt / 3), 1)
  if redis.call('exists', lock) == 0 then
    if not head or head == owner then
      if head then
        redis.call('lpop', queue)
        redis.call('zrem', zset, owner)
        -- The next waiter is now first. Its heartbeat brings it to sleep on
        -- our TTL before that runs out, unless the lease is shorter.
        if tonumber(ARGV[5]) < beat then
          wake(redis.call('lindex', queue, 0))
        end
      end
      redis.call('hset', lock, owner, 1)
      redis.call('pexpire', lock, ARGV[5])
      return {1, 0}
    end
  elseif redis.call('hexists', lock, owner) == 1 then
    if ARGV[7] ~= '1' then
      return {1, 0}
    end
    redis.call('hincrby', lock, owner, 1)
    redis.call('pexpire', lock, ARGV[5])
    return {1, 0}
  end
  if op == 'acquire' and not queued then
    redis.call('rpush', queue, owner)
    redis.call('zadd', zset, now + wt, owner)
    head = head or owner
  end
  local sleep = beat
  if not head or head == owner then
    -- First in line (or try with an empty queue): the lock is held, and
    -- frees itself when its TTL runs out.
    local pttl = redis.call('pttl', lock)
    if pttl >= 0 then
      sleep = math.max(math.min(sleep, pttl), 1)
    end
    return {0, sleep}
  end
  -- Behind a head: wake when the head would turn stale, in case it died.
  return {0, math.min(sleep, tonumber(redis.call('zscore', zset, head)) - now + 1)}
end

if op == 'release' then
  if redis.call('hexists', lock, owner) == 0 then
    if redis.call('exists', lock) == 0 then
      wake(head)
    end
    return -1
  end
  if redis.call('hincrby', lock, owner, -1) > 0 then
    redis.call('pexpire', lock, ARGV[5])
    return 0
  end
  redis.call('del', lock)
  wake(head)
  return 1
end

if op == 'dequeue' then
  return removed
end

if op == 'force' then
  if redis.call('del', lock) == 1 then
    wake(head)
    return 1
  end
  return 0
end

return redis.error_reply('fairlock_ops: unknown operation ' .. tostring(op))
