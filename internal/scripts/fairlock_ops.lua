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
-- KEYS[6] latchkey_lock_grant:{N}      the latchkey waiter a release granted
--                                      the lock to, until it takes it
-- KEYS[7] latchkey_lock__channel:{N}   a latchkey client's channel is
--                                      KEYS[7]:<hub id>
-- ARGV[1] the operation: acquire, try, release, dequeue or force
-- ARGV[2] owner id <uuid>:<n> ("" for force)
-- ARGV[3] now, client wall clock in ms
-- ARGV[4] PUBLISH or SPUBLISH
-- ARGV[5] lease in ms
-- ARGV[6] Redisson's wait timeout in ms (its fairLockWaitTimeout)
-- ARGV[7] liveness timeout in ms: a queued latchkey waiter's heartbeat is
--         now + this, renewed by each of its attempts
-- ARGV[8] (acquire, try) "1": the owner may re-enter (its count goes up);
--         "2": it may, and holds the lock through the caller's handle, so
--         that a grant it finds was taken already; "0": the id is fresh for
--         this one acquisition, so finding it already holding means this is
--         a resent request that was applied before, or a grant: it succeeds
--         again without a second hold.
-- ARGV[9] grace in ms: the lease of a granted hold until its waiter takes it
-- ARGV[10] (acquire, try, dequeue) the caller's Hub id: a latchkey waiter
--         is told on its client's channel, with letters "@<key> <body>"
--         (see below), not on Redisson's channel of its own
-- ARGV[11] (acquire, try, dequeue) the caller's letter key: its owner id,
--         and for an owner that may re-enter, /<call id>, so that a letter
--         meant for one Lock call never reaches a later one of the owner
--
-- The heartbeat zset's members are <hub id>/<key>.
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
-- A release (or forced unlock) that frees the lock while a latchkey waiter
-- is first grants the lock to it in the same call, as its acquisition
-- would: it leaves the queue, the deadlines move up, and it holds the lock
-- (count 1) for the grace, told by the letter "@<owner> 0 <server clock in
-- µs>", so that it returns from Lock without another round trip and then
-- extends the lease to its own. The next waiter is told too: a latchkey one with
-- "@<owner> next", so that it tries once the grace is over should the
-- grant never be taken; a Redisson one with "0", so that it sleeps on the
-- grant's TTL. A Redisson waiter first in line is woken as Redisson's
-- unlock wakes it. A latchkey waiter is otherwise woken with
-- "@<owner> wake"; it listens on Redisson's channel of its own only while
-- a Redisson client holds the lock or waits ahead of it (the attempt's
-- reply says so), since only Redisson's scripts publish there then.
--
-- Returns:
--   acquire, try  {1, n} when acquired or re-entered (TTL reset to the lease),
--                 n being the owner's holds now;
--                 {0, ms, foreign, now} when not: ms >= 1 is the longest
--                 the caller may sleep before its next attempt; foreign is
--                 1 if a Redisson client holds the lock or waits ahead of
--                 the caller; now is the server's clock in µs, against
--                 which the waiter dates a grant's letter. acquire queues
--                 the caller at the tail if it is not queued; try leaves no
--                 trace.
--   release       -1 if the owner does not hold the lock (if the lock is free
--                 the head is woken anyway, as Redisson's unlock does), 0 if
--                 holds remain (TTL reset), 1 if released (key deleted, head
--                 woken).
--   dequeue       1 if the owner was queued and is removed, or had been
--                 granted the lock and gives it back; 0 otherwise.
--   force         1 if the lock existed (deleted, head woken), 0 otherwise.
--
-- The script validates, then decides on a copy of the queue in memory, then
-- writes: a Lua error part-way would leave the writes before it in place. A
-- release, and an acquisition by an owner that may re-enter, are recorded
-- against their request, so that a resend answers as the first run did.
-- uses fragment/once.lua
local op, owner = ARGV[1], ARGV[2]
local now, lease, wt, lt = tonumber(ARGV[3]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local lock, queue, zset, hbs, grant = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[6]

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

if op == 'release' or ((op == 'acquire' or op == 'try') and ARGV[8] ~= '0') then
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
local hub, key = {}, {} -- latchkey waiter -> its Hub id, its letter key
for i = 1, #zs, 2 do
  deadline[zs[i]] = tonumber(zs[i + 1])
  was.deadline[zs[i]] = deadline[zs[i]]
end
local wasMembers = {}
for i = 1, #hs, 2 do
  local h, k = string.match(hs[i], '^([^/]*)/(.*)$')
  local who = k and string.match(k, '^[^/]*') or hs[i]
  heartbeat[who], hub[who], key[who] = tonumber(hs[i + 1]), h, k
  was.heartbeat[who] = heartbeat[who]
  wasMembers[hs[i]] = heartbeat[who]
end
if ARGV[10] ~= '' and (op == 'acquire' or op == 'try' or op == 'dequeue') then
  hub[owner], key[owner] = ARGV[10], ARGV[11]
end
local pttl = redis.call('pttl', lock) -- -2: the lock is free
local holds = tonumber(redis.call('hget', lock, owner)) or 0
-- The caller was granted the lock and has not taken the grant yet.
local granted = holds > 0 and redis.call('get', grant) == owner

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
-- wake tells a waiter: body is the letter for a latchkey waiter (a grant
-- or "next"); nil wakes it (a Redisson waiter always gets "0").
local function wake(who, body)
  if who and who ~= owner and not woken[who] then
    wakes[#wakes + 1], woken[who] = {who, body}, true
  end
end
-- free hands the lock, freed by this call, to the first waiter: granted if
-- it is a latchkey waiter, woken if it is Redisson's.
local grantee
local function free()
  local first = q[1]
  if not (first and heartbeat[first]) then
    wake(first)
    return
  end
  leave(1, false)
  for w, d in pairs(deadline) do
    deadline[w] = d - wt -- an acquisition: the queue moved up a slot
  end
  grantee = first
  local t = redis.call('time')
  wake(first, '0 ' .. t[1] .. string.format('%06d', tonumber(t[2])))
  local next = q[1]
  if next and heartbeat[next] then
    wake(next, 'next')
  else
    wake(next)
  end
end

-- foreign reports 1 if the lock's holder is not a latchkey owner (a version
-- 8 UUID, then ':'), or a Redisson waiter is queued ahead of the caller:
-- then Redisson's scripts may be the ones to tell the caller.
local function foreign()
  if pttl ~= -2 then
    local f = redis.call('hkeys', lock)[1] or ''
    if not (string.sub(f, 15, 15) == '8' and string.sub(f, 37, 37) == ':') then
      return 1
    end
  end
  for _, w in ipairs(q) do
    if w == owner then
      break
    end
    if not heartbeat[w] then
      return 1
    end
  end
  return 0
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
  if granted then
    dequeued = 1 -- granted after its waiter gave up: given back below
  end
elseif (op == 'acquire' or op == 'try') and indexOf(owner) then
  heartbeat[owner] = now + lt
end
for w, beat in pairs(was.heartbeat) do
  if heartbeat[w] and beat <= now then
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
    write, reply = 'take', {1, 1}
  elseif granted and ARGV[8] ~= '2' then
    write, reply = 'taken', {1, 1} -- a grant whose letter was not read
  elseif holds > 0 then
    reply = {1, holds}
    if ARGV[8] ~= '0' then
      write, reply = 'again', {1, holds + 1}
    end
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
    local t = redis.call('time')
    reply = {0, sleep, foreign(), tonumber(t[1]) * 1000000 + tonumber(t[2])}
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
    free()
  end
elseif op == 'dequeue' then
  if granted then
    write = 'delete'
    free()
  end
  reply = dequeued
elseif pttl ~= -2 then -- force
  write, reply = 'delete', 1
  free()
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
-- members are <owner>/<hub id>
local function members(scores)
  local m = {}
  for w, beat in pairs(scores) do
    m[(hub[w] or '') .. '/' .. (key[w] or w)] = beat
  end
  return m
end
sync(hbs, members(heartbeat), wasMembers)
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
elseif write == 'taken' then
  redis.call('del', grant)
  redis.call('pexpire', lock, lease)
elseif write == 'again' then
  redis.call('hincrby', lock, owner, 1)
  redis.call('pexpire', lock, lease)
  if granted then
    redis.call('del', grant) -- taken by the Lock this re-enters
  end
elseif write == 'decrement' then
  redis.call('hincrby', lock, owner, -1)
  redis.call('pexpire', lock, lease)
elseif write == 'delete' then
  redis.call('del', lock)
  redis.call('del', grant)
end
if grantee then
  redis.call('hset', lock, grantee, 1)
  redis.call('pexpire', lock, ARGV[9])
  redis.call('set', grant, grantee, 'PX', ARGV[9])
end
for _, w in ipairs(wakes) do
  local who, body = w[1], w[2]
  if hub[who] and hub[who] ~= '' then
    redis.call(ARGV[4], KEYS[7] .. ':' .. hub[who], '@' .. key[who] .. ' ' .. (body or 'wake'))
  else
    redis.call(ARGV[4], KEYS[5] .. ':' .. who, '0')
  end
end
if write then
  return once_record(reply)
end
return reply
