-- fair_acquire.lua: take a Redisson fair lock (RFairLock), or queue up for
-- it (see fair_decide.lua); with ARGV[12], try once, leaving no trace.
-- KEYS[1..8] the fair lock's (see fair_state.lua): lock hash, Redisson's
--         queue, Redisson's deadlines, heartbeats, Redisson's channel
--         prefix, grant, Hub channel prefix, fencing counter
-- ARGV[1..5] now, PUBLISH or SPUBLISH, liveness timeout, grace, counted
--         (see inputs.lua)
-- ARGV[6..8] owner id, lease, Redisson's wait timeout (see fair_state.lua)
-- ARGV[9] "1": the owner may re-enter (its count goes up); "2": it may,
--         and holds the lock through the caller's handle, so that a grant
--         it finds was taken already; "0": the id is fresh for this one
--         acquisition, so finding it already holding means this is a
--         resent request that was applied before, or a grant: it succeeds
--         again without a second hold
-- ARGV[10] the caller's Hub id: a latchkey waiter is told on its client's
--         channel, with letters "@<key> <body>", not on Redisson's channel
--         of its own
-- ARGV[11] the caller's letter key: its owner id, and for an owner that
--         may re-enter, /<call id>, so that a letter meant for one Lock
--         call never reaches a later one of the owner
-- ARGV[12] "1" to try once: the caller never queues
-- Returns {1, n, token} when acquired or re-entered (TTL reset to the
-- lease), n being the owner's holds now and token the hold's fencing
-- token: each acquisition draws the next, a re-entry too (as Redisson's
-- RFencedLock does), while a grant's (see fair_decide.lua) or a resent
-- request's is the one drawn then; {0, ms, foreign, now, rank} when not:
-- ms >= 1 is the longest the caller may sleep before its next attempt;
-- foreign is 1 if a Redisson client holds the lock or waits ahead of the
-- caller; now is the server's clock in µs, against which the waiter dates
-- a grant's letter; rank is how many waiters are ahead of the caller (a
-- polling waiter looks again sooner the closer it is: see
-- internal/wait/poll.go). The caller joins the queue at the tail if it is
-- not queued, unless it tries once.
-- An acquisition by an owner that may re-enter is recorded against its
-- request (see once.lua), so that a resend answers as the first run did;
-- one by a fresh id has no record (a resend finds the id holding instead).
-- uses fragment/once.lua
-- uses fragment/fair_state.lua
-- uses fragment/replay.lua
-- uses fragment/fair_decide.lua
-- uses fragment/fair_write.lua
-- uses fragment/clock.lua
local reentry = ARGV[9]

-- current returns the token the owner's hold drew: the counter, which no
-- acquisition moved on while the owner held; one lost meanwhile starts
-- again above every token handed out (see fence.lua).
local function current()
  local t = redis.call('get', token)
  if t then
    return tonumber(t)
  end
  return fence()
end

read()
if ARGV[10] ~= '' then
  hub[owner], key[owner] = ARGV[10], ARGV[11]
end
local before = q[1]
if indexOf(owner) then
  heartbeat[owner] = now + lt
end
local head = settle(before)
local beat = math.max(math.floor(lt / 3), 1)

if pttl == -2 and (not head or head == owner) then
  if head then
    leave(1, false)
  end
  advance()
  heartbeat[owner] = nil
  -- The next waiter is now first. A latchkey waiter's heartbeat brings it
  -- to sleep on our TTL before that runs out, unless the lease is
  -- shorter; a Redisson waiter sleeps on the TTL it last saw, which may be
  -- an earlier holder's and outlast ours.
  local next = q[1]
  if lease < beat or (next and not heartbeat[next]) then
    wake(next)
  end
  return commit({1, 1, fence()}, function()
    redis.call('hset', lock, owner, '1')
    redis.call('pexpire', lock, lease)
  end)
end
if granted and reentry ~= '2' then
  return commit({1, 1, current()}, function() -- a grant whose letter was not read
    redis.call('del', grant)
    redis.call('pexpire', lock, lease)
  end)
end
if holds > 0 then
  if reentry == '0' then
    return commit({1, holds, current()})
  end
  return commit({1, holds + 1, fence()}, function()
    redis.call('hincrby', lock, owner, '1')
    redis.call('pexpire', lock, lease)
    if granted then
      redis.call('del', grant) -- taken by the Lock this re-enters
    end
  end)
end
if ARGV[12] ~= '1' and not indexOf(owner) then
  local tail = q[#q]
  deadline[owner] = ((tail and deadline[tail]) or now + pttl) + wt
  heartbeat[owner] = now + lt
  q[#q + 1], appended = owner, true
  head = q[1]
end
local sleep = beat
if head == nil or head == owner then
  -- First in line (or a try with an empty queue): the lock is held, and
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
local at = micros()
return commit({0, sleep, foreign(), at, (indexOf(owner) or #q + 1) - 1})
