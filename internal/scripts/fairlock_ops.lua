-- fairlock_ops.lua: every operation on a Redisson fair lock (RFairLock).
-- One script serves them all because they share the queue upkeep below, and
-- Lua scripts cannot include one another.
--
-- KEYS[1] lock hash N                  {owner = hold count}, TTL = lease
-- KEYS[2] redisson_lock_queue:{N}      list of waiting owners, in arrival order
-- KEYS[3] redisson_lock_timeout:{N}    zset owner -> Redisson deadline, client
--                                      clock ms
-- KEYS[4] latchkey_lock_heartbeat:{N}  zset latchkey owner -> heartbeat
--                                      deadline, client clock ms (latchkey's
--                                      own key: Redisson never reads it)
-- KEYS[5] redisson_lock__channel:{N}   a waiter's own channel is KEYS[5]:<owner>
-- ARGV[1] the operation: acquire, try, release, dequeue or force
-- ARGV[2] owner id <uuid>:<n> ("" for force)
-- ARGV[3] now, client wall clock in ms
-- ARGV[4] PUBLISH or SPUBLISH
-- ARGV[5] lease in ms
-- ARGV[6] Redisson's wait timeout in ms (its fairLockWaitTimeout)
-- ARGV[7] liveness timeout in ms: a queued latchkey waiter's heartbeat is
--         now + this, renewed by each of its attempts
-- ARGV[8] (acquire, try) "1": the owner may re-enter (its count goes up);
--         "0": the id is fresh for this one acquisition, so finding it
--         already holding means this is a resent request that was applied
--         before: it succeeds again without a second hold.
--
-- KEYS[2] and KEYS[3] follow Redisson's rules exactly, for every waiter: a
-- deadline is set once, when its waiter arrives, to the deadline of the
-- waiter before it (or now + the lock's PTTL when there is none) + the wait
-- timeout; every acquisition brings every deadline closer by the wait
-- timeout, and a waiter that leaves brings those behind it closer by it; a
-- waiter whose deadline has passed is removed only once it is first in line.
-- Nothing else ever changes a deadline.
--
-- latchkey's own rule, for its own waiters only: a queued latchkey waiter
-- renews its heartbeat at each attempt, and one whose heartbeat has passed
-- (it crashed) leaves the queue wherever it is, as if it had dequeued.
-- Whenever the first place changes other than by taking the lock, the new
-- first waiter is sent "0" on its own channel, so that it tries at once (the
-- lock may be free) or sleeps on the holder's TTL; when the first waiter
-- takes the lock, the next one is woken if it is a Redisson waiter, or if
-- the lease is shorter than its heartbeat.
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
--
-- The script validates, then decides on a copy of the queue in memory, then
-- writes: a Lua error part-way would leave the writes before it in place. A
-- release, and an acquisition by an owner that may re-enter, are recorded
-- against their request, so that a resend answers as the first run did.
-- uses prelude/once.lua
local op, owner = ARGV[1], ARGV[2]
local now, lease, wt, lt = tonumber(ARGV[3]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local lock, queue, zset, hbs = KEYS[1], KEYS[2], KEYS[3], KEYS[4]

-- Validate.
local known = {acquire = true, try = true, release = true, dequeue = true, force = true}
if not known[op] then
  return redis.error_reply('fairlock_ops: unknown operation ' .. tostring(op))
end
if not (now and lease and wt and lt and lease > 0 and wt > 0 and lt > 0) then
  return redis.error_reply('fairlock_ops: now, lease and timeouts must be numbers, all but now positive')
end
for _, k in ipairs({{lock, 'hash'}, {queue, 'list'}, {zset, 'zset'}, {hbs, 'zset'}}) do
  local t = redis.call('type', k[1])['ok']
  if t ~= 'none' and t ~= k[2] then
    return redis.error_reply('WRONGTYPE fairlock_ops: ' .. k[1] .. ' holds a ' .. t)
  end
end

if op == 'release' or ((op == 'acquire' or op == 'try') and ARGV[8] == '1') then
  local done = once_replay()
  if done then
    return done
  end
end

-- Read.
local q = redis.call('lrange', queue, 0, -1)
local zs = redis.call('zrange', zset, 0, -1, 'withscores')
local hs = redis.call('zrange', hbs, 0, -1, 'withscores')
local deadline, heartbeat, was = {}, {}, {deadline = {}, heartbeat = {}}
for i = 1, #zs, 2 do
  deadline[zs[i]] = tonumber(zs[i + 1])
  was.deadline[zs[i]] = deadline[zs[i]]
end
for i = 1, #hs, 2 do
  heartbeat[hs[i]] = tonumber(hs[i + 1])
  was.heartbeat[hs[i]] = heartbeat[hs[i]]
end
local pttl = redis.call('pttl', lock) -- -2: the lock is free
local holds = tonumber(redis.call('hget', lock, owner)) or 0

-- Decide, on q, deadline and heartbeat.
local removed, appended = {}, false
local function indexOf(who)
  for i, w in ipairs(q) do
    if w == who then
      return i
    end
  end
end
-- leave removes the i-th waiter. With shift the waiters behind it move up a
-- slot, so their deadlines come that much closer (Redisson's acquireFailed).
local function leave(i, shift)
  local who = table.remove(q, i)
  removed[#removed + 1] = who
  deadline[who], heartbeat[who] = nil, nil
  if shift then
    for j = i, #q do
      if deadline[q[j]] then
        deadline[q[j]] = deadline[q[j]] - wt
      end
    end
  end
end
local wakes, woken = {}, {}
local function wake(who)
  if who and who ~= owner and not woken[who] then
    wakes[#wakes + 1], woken[who] = who, true
  end
end

local before = q[1]
local dequeued = 0
if op == 'dequeue' then
  local i = indexOf(owner)
  if i then
    leave(i, true)
    dequeued = 1
  end
  deadline[owner], heartbeat[owner] = nil, nil
elseif (op == 'acquire' or op == 'try') and indexOf(owner) then
  heartbeat[owner] = now + lt
end
for i = 1, #hs, 2 do
  local w = hs[i]
  if heartbeat[w] and heartbeat[w] <= now then
    local j = indexOf(w)
    if j then
      leave(j, true)
    end
    deadline[w], heartbeat[w] = nil, nil
  end
end
while q[1] and not (deadline[q[1]] and deadline[q[1]] > now) do
  leave(1, false) -- Redisson's stale head, or an entry without a deadline
end
local head = q[1]
if head ~= before then
  wake(head)
end

local reply, write
local beat = math.max(math.floor(lt / 3), 1)
if op == 'acquire' or op == 'try' then
  if pttl == -2 and (not head or head == owner) then
    if head then
      leave(1, false)
    end
    for w, d in pairs(deadline) do
      deadline[w] = d - wt -- the queue moved up a slot
    end
    heartbeat[owner] = nil
    -- The next waiter is now first. A latchkey waiter's heartbeat brings it
    -- to sleep on our TTL before that runs out, unless the lease is
    -- shorter; a Redisson waiter sleeps on the TTL it last saw, which may be
    -- an earlier holder's and outlast ours.
    local next = q[1]
    if lease < beat or (next and not heartbeat[next]) then
      wake(next)
    end
    write, reply = 'take', {1, 0}
  elseif holds > 0 then
    if ARGV[8] == '1' then
      write = 'again'
    end
    reply = {1, 0}
  else
    if op == 'acquire' and not indexOf(owner) then
      local tail = q[#q]
      deadline[owner] = ((tail and deadline[tail]) or now + pttl) + wt
      heartbeat[owner] = now + lt
      q[#q + 1], appended = owner, true
      head = q[1]
    end
    local sleep = beat
    if head == nil or head == owner then
      -- First in line (or try with an empty queue): the lock is held, and
      -- frees itself when its TTL runs out.
      if pttl >= 0 then
        sleep = math.max(math.min(sleep, pttl), 1)
      end
    else
      -- Behind a head: wake when it would be skipped, in case it died.
      local gone = deadline[head]
      if heartbeat[head] and heartbeat[head] < gone then
        gone = heartbeat[head]
      end
      sleep = math.min(sleep, gone - now + 1)
    end
    reply = {0, sleep}
  end
elseif op == 'release' then
  if holds == 0 then
    if pttl == -2 then
      wake(head)
    end
    reply = -1
  elseif holds > 1 then
    write, reply = 'decrement', 0
  else
    write, reply = 'delete', 1
    wake(head)
  end
elseif op == 'dequeue' then
  reply = dequeued
elseif pttl ~= -2 then -- force
  write, reply = 'delete', 1
  wake(head)
else
  reply = 0
end

-- Write.
for _, w in ipairs(removed) do
  redis.call('lrem', queue, 1, w)
end
if appended then
  redis.call('rpush', queue, owner)
end
-- sync makes the zset key hold the scores in is, given those it held.
local function sync(key, is, was)
  local add, rem = {}, {}
  for w, s in pairs(is) do
    if was[w] ~= s then
      add[#add + 1], add[#add + 2] = s, w
    end
  end
  for w in pairs(was) do
    if not is[w] then
      rem[#rem + 1] = w
    end
  end
  for i = 1, #add, 1000 do
    redis.call('zadd', key, unpack(add, i, math.min(i + 999, #add)))
  end
  for i = 1, #rem, 1000 do
    redis.call('zrem', key, unpack(rem, i, math.min(i + 999, #rem)))
  end
end
sync(zset, deadline, was.deadline)
sync(hbs, heartbeat, was.heartbeat)
if heartbeat[owner] then
  -- A heartbeat matters until it passes or its waiter's deadline does (a
  -- stale first waiter leaves by Redisson's rule): outlive both, so that a
  -- forgotten key goes, but a dead waiter is never taken for a Redisson one.
  local keep = lt
  for w in pairs(heartbeat) do
    if deadline[w] and deadline[w] - now > keep then
      keep = deadline[w] - now
    end
  end
  if redis.call('pttl', hbs) < keep then
    redis.call('pexpire', hbs, keep)
  end
end
if write == 'take' then
  redis.call('hset', lock, owner, 1)
  redis.call('pexpire', lock, lease)
elseif write == 'again' then
  redis.call('hincrby', lock, owner, 1)
  redis.call('pexpire', lock, lease)
elseif write == 'decrement' then
  redis.call('hincrby', lock, owner, -1)
  redis.call('pexpire', lock, lease)
elseif write == 'delete' then
  redis.call('del', lock)
end
for _, w in ipairs(wakes) do
  redis.call(ARGV[4], KEYS[5] .. ':' .. w, '0')
end
if write then
  return once_record(reply)
end
return reply
