-- once.lua: the request record, so that a request sent twice (go-redis
-- resends a command whose reply was lost) is applied once and answered the
-- same way both times.
--
-- Reads the last of KEYS and of ARGV, which the runner appends to those
-- the script declares, and takes them off again, so the script sees its
-- KEYS and ARGV as its header describes them:
-- KEYS[#KEYS] latchkey_once:{name}:<request id>, the record of this request
-- KEYS[#KEYS-n..#KEYS-1] records of the client's requests that were
--             answered, and are done with, to delete (n is ARGV[#ARGV-1])
-- ARGV[#ARGV] how long the record lives, in ms; 0 when repeating the
--             request is harmless, and then nothing is read or written;
--             negative to resolve a request its caller gave up on (below)
-- ARGV[#ARGV-1] n, how many records to delete come before this one's
-- A record holds the reply: "n<integer>" or "a<integer>,<integer>,...", or
-- "x" for a request cancelled before it applied.
-- Defines once_replay() and once_record(reply); a request to resolve is
-- answered here, and the script does not run.
local once_key = table.remove(KEYS)
local once_ttl = tonumber(table.remove(ARGV))
local done_with = tonumber(table.remove(ARGV))
if done_with > 0 then
  local old = {}
  for i = 1, done_with do
    old[i] = table.remove(KEYS)
  end
  redis.call('del', unpack(old))
end

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
-- fair_state.lua: the fair lock's KEYS and the inputs every fair lock
-- script takes, checked first, and the state each reads before it decides.
-- KEYS[1] lock hash N                  {owner = hold count}, TTL = lease
-- KEYS[2] redisson_lock_queue:{N}      list of waiting owners, in arrival order
-- KEYS[3] redisson_lock_timeout:{N}    zset owner -> Redisson deadline, client
--                                      clock ms
-- KEYS[4] latchkey_lock_heartbeat:{N}  zset latchkey waiter -> heartbeat
--                                      deadline, client clock ms (latchkey's
--                                      own key: Redisson never reads it); its
--                                      members are <hub id>/<key>
-- KEYS[5] redisson_lock__channel:{N}   a waiter's own channel is KEYS[5]:<owner>
-- KEYS[6] latchkey_lock_grant:{N}      the latchkey waiter a release granted
--                                      the lock to, until it takes it
-- KEYS[7] latchkey_lock__channel:{N}   a latchkey client's channel is
--                                      KEYS[7]:<hub id>
-- KEYS[8] latchkey_lock_token:{N}      the fencing counter (latchkey's own:
--                                      Redisson's fair lock keeps none)
-- ARGV[1..5] see inputs.lua; ARGV[3] is the liveness timeout: a queued
--         latchkey waiter's heartbeat is now + this, renewed by each of
--         its attempts
-- ARGV[6] owner id <uuid>:<n> ("" for a forced unlock)
-- ARGV[7] lease in ms
-- ARGV[8] Redisson's wait timeout in ms (its fairLockWaitTimeout)
-- Bad inputs or keys of the wrong type are answered at once with an error
-- reply: the scripts validate, then decide on a copy of the queue in
-- memory (fair_decide.lua), then write (fair_write.lua), since a Lua
-- error part-way would leave the writes before it in place. (A script
-- that uses replay.lua after this fragment answers a request applied
-- before from its record, once the inputs are found good.)
-- Defines lock, queue, zset, hbs, channel, grant, hubs and token (the KEYS),
-- owner, lease, wt, lt; read(), which sets q (the queue), deadline and
-- heartbeat (waiter -> score), was (the scores read), wasMembers, hub and
-- key (latchkey waiter -> its Hub id, its letter key), pttl (-2: the lock
-- is free), holds (the owner's) and granted (the owner was granted the
-- lock and has not taken the grant yet).
-- uses fragment/inputs.lua
local lock, queue, zset, hbs, channel = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local grant, hubs, token = KEYS[6], KEYS[7], KEYS[8]
local owner, lease, wt, lt = ARGV[6], tonumber(ARGV[7]), tonumber(ARGV[8]), life

if not (now and lease and wt and lt and lease > 0 and wt > 0 and lt > 0) then
  return redis.error_reply('fairlock: now, lease and timeouts must be numbers, all but now positive')
end
for _, k in ipairs({{lock, 'hash'}, {queue, 'list'}, {zset, 'zset'}, {hbs, 'zset'}, {token, 'string'}}) do
  local t = redis.call('type', k[1])['ok']
  if t ~= 'none' and t ~= k[2] then
    return redis.error_reply('WRONGTYPE fairlock: ' .. k[1] .. ' holds a ' .. t)
  end
end

local q, deadline, heartbeat, was, wasMembers, hub, key, pttl, holds, granted

local function read()
  q = redis.call('lrange', queue, 0, -1)
  local zs = redis.call('zrange', zset, 0, -1, 'withscores')
  local hs = redis.call('zrange', hbs, 0, -1, 'withscores')
  deadline, heartbeat, was = {}, {}, {deadline = {}, heartbeat = {}}
  hub, key, wasMembers = {}, {}, {}
  for i = 1, #zs, 2 do
    deadline[zs[i]] = tonumber(zs[i + 1])
    was.deadline[zs[i]] = deadline[zs[i]]
  end
  for i = 1, #hs, 2 do
    local h, k = string.match(hs[i], '^([^/]*)/(.*)$')
    local who = k and string.match(k, '^[^/]*') or hs[i]
    heartbeat[who], hub[who], key[who] = tonumber(hs[i + 1]), h, k
    was.heartbeat[who] = heartbeat[who]
    wasMembers[hs[i]] = heartbeat[who]
  end
  pttl = redis.call('pttl', lock)
  holds = tonumber(redis.call('hget', lock, owner)) or 0
  granted = holds > 0 and redis.call('get', grant) == owner
end
-- replay.lua: answers a resent request as its first run did, first thing,
-- for a script whose every run that changes state is recorded (see
-- once.lua). A request not applied before goes on to the script.
-- Reads no KEYS or ARGV of its own. Defines nothing.
-- uses fragment/once.lua
local replayed = once_replay()
if replayed then
  return replayed
end
-- hold.lua: a Redisson lock hash {owner = hold count} as latchkey's
-- releases hand it on: who holds it, and a hold granted to a waiter.
-- Reads ARGV[4] (see inputs.lua), and the locals lock (the hash) and
-- grant (the key naming the waiter the lock was granted to, until it
-- takes the grant), which the fragment that names the primitive's KEYS
-- defines before it.
-- Defines foreign_holder() and grant_hold(field, who).
-- uses fragment/inputs.lua

-- foreign_holder reports whether the lock's holder (its first field) is
-- not a latchkey owner, whose ids are a version 8 UUID, then ':': its
-- release will grant nothing, and only Redisson's channel will say that
-- the lock is free.
local function foreign_holder()
  local f = redis.call('hkeys', lock)[1] or ''
  return not (string.sub(f, 15, 15) == '8' and string.sub(f, 37, 37) == ':')
end

-- grant_hold makes the owner field the holder of the free lock, with a
-- lease of the grace only, and records the grant to the waiter who until
-- it takes it (its next attempt extends the lease to its own).
local function grant_hold(field, who)
  redis.call('hset', lock, field, 1)
  redis.call('pexpire', lock, grace)
  redis.call('set', grant, who, 'PX', grace)
end
-- fair_decide.lua: the fair lock's rules, applied to the state that
-- fair_state.lua read, in memory; fair_write.lua writes the outcome.
--
-- Redisson's queue and deadlines follow Redisson's rules exactly, for
-- every waiter: a deadline is set once, when its waiter arrives, to the
-- deadline of the waiter before it (or now + the lock's PTTL when there is
-- none) + the wait timeout; every acquisition brings every deadline closer
-- by the wait timeout, and a waiter that leaves brings those behind it
-- closer by it; a waiter whose deadline has passed is removed only once it
-- is first in line. Nothing else ever changes a deadline.
--
-- latchkey's own rule, for its own waiters only: a queued latchkey waiter
-- renews its heartbeat at each attempt, and one whose heartbeat has passed
-- (it crashed) leaves the queue wherever it is, as if it had dequeued.
-- Whenever the first place changes other than by taking the lock, the new
-- first waiter is sent "0" on its own channel, so that it tries at once
-- (the lock may be free) or sleeps on the holder's TTL; when the first
-- waiter takes the lock, the next one is woken if it is a Redisson waiter,
-- or if the lease is shorter than its heartbeat.
--
-- A release (or forced unlock) that frees the lock while a latchkey waiter
-- is first grants the lock to it in the same call, as its acquisition
-- would: it leaves the queue, the deadlines move up, and it holds the lock
-- (count 1) for the grace, told by the letter "@<owner> <token> <server
-- clock in µs>", its fencing token drawn as an acquisition draws it, so
-- that it returns from Lock without another round trip and then extends
-- the lease to its own. The next waiter is told too: a latchkey
-- one with "@<owner> next", so that it tries once the grace is over should
-- the grant never be taken; a Redisson one with "0", so that it sleeps on
-- the grant's TTL. A Redisson waiter first in line is woken as Redisson's
-- unlock wakes it. A latchkey waiter is otherwise woken with
-- "@<owner> wake"; it listens on Redisson's channel of its own only while
-- a Redisson client holds the lock or waits ahead of it (the attempt's
-- reply says so), since only Redisson's scripts publish there then.
--
-- Reads what fair_state.lua defines, and ARGV[1] (see inputs.lua).
-- Defines removed, appended, wakes, grantee; indexOf(who), leave(i,
-- shift), advance(), wake(who, body), free(), foreign() and
-- settle(before).
-- uses fragment/hold.lua

local removed, appended = {}, false

-- indexOf returns the place of who in the queue, or nil.
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

-- advance moves the queue up a slot, as an acquisition does: every
-- deadline comes closer by the wait timeout.
local function advance()
  for w, d in pairs(deadline) do
    deadline[w] = d - wt
  end
end

-- wake tells a waiter: body is the letter for a latchkey waiter ("next",
-- or "grant", which fair_write.lua writes as the grant's letter, once the
-- grant's token is drawn); nil wakes it (a Redisson waiter always gets
-- "0").
local wakes, woken = {}, {}
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
  advance()
  grantee = first
  wake(first, 'grant')
  local next = q[1]
  if next and heartbeat[next] then
    wake(next, 'next')
  else
    wake(next)
  end
end

-- foreign reports 1 if the lock's holder is not a latchkey owner, or a
-- Redisson waiter is queued ahead of the caller: then Redisson's scripts
-- may be the ones to tell the caller.
local function foreign()
  if pttl ~= -2 and foreign_holder() then
    return 1
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

-- settle drops the latchkey waiters whose heartbeat passed, wherever they
-- are, and Redisson's stale first waiters; it wakes the new first waiter
-- if it is not before, the first one when the script began, and returns
-- it.
local function settle(before)
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
  return head
end
-- letter.lua: letters to latchkey waiters, on the channel of each one's
-- client's pub/sub Hub: "@<key> <body>", key being the waiter's address.
-- Reads ARGV[2] and ARGV[5] (see inputs.lua), and the local hubs, the
-- prefix of each Hub's channel (<prefix>:<hub id>), which the fragment that
-- names the primitive's KEYS defines before it.
-- Defines letter(hub, key, body).
-- uses fragment/inputs.lua

-- letter writes body to the waiter whose letters go to key on the channel
-- of the Hub hub, and reports whether someone may read it: false when the
-- server counts receivers and no connection heard it, so that the waiter's
-- client is gone. A waiter without a Hub (hub ''), whose client polls,
-- gets no letter: it finds what a letter would say by its next look.
local function letter(hub, key, body)
  if hub == '' then
    return true
  end
  return redis.call(pub, hubs .. ':' .. hub, '@' .. key .. ' ' .. body) > 0 or not counted
end
-- ttl.lua: a key's TTL raised, never shortened.
-- Reads no KEYS or ARGV. Defines extend(key, ms).

-- extend sets the TTL of key to ms unless it has more left; a key without
-- a TTL gets one.
local function extend(key, ms)
  if redis.call('pttl', key) < tonumber(ms) then
    redis.call('pexpire', key, ms)
  end
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
-- fence.lua: a lock's fencing token: the mutex's (RFencedLock's counter),
-- a fair lock's or a write lock's (latchkey's own counters).
-- Reads the local token (the counter's key), which the script, or the
-- fragment that names its KEYS (mutex_keys.lua, fair_state.lua), defines
-- before it.
-- Defines fence().
-- uses fragment/clock.lua

-- fence returns the next fencing token. A counter that is missing (new,
-- expired, or lost to a restart without persistence), or that a client
-- which never seeds it (Redisson's RFencedLock) started again from 1,
-- starts from the server's clock in microseconds: every token drawn since
-- a counter's start is below the clock, so the new start is above every
-- token handed out before (1e15 µs is 2001).
-- A counter lives a day from its start, and again from every 256th token:
-- a lock that is no longer used leaves no key for long ("a lock per
-- order"), and the refresh costs one command in 256 draws, not one in
-- each. A counter that expires in use starts again, higher.
local function fence()
  local t = redis.call('incr', token)
  if t < 1e15 then
    t = micros()
    redis.call('set', token, t, 'PX', '86400000')
  elseif t % 256 == 0 then
    redis.call('pexpire', token, '86400000')
  end
  return t
end
-- fair_write.lua: writes what a fair lock script decided (see
-- fair_decide.lua): the queue, the deadlines and heartbeats, the lock,
-- the grant, and the letters and wake-ups.
-- Reads what fair_state.lua and fair_decide.lua define, and ARGV[1],
-- ARGV[2] and ARGV[4] (see inputs.lua).
-- Defines fence() (see fence.lua), commit(reply, write) and delete().
-- uses fragment/once.lua
-- uses fragment/letter.lua
-- uses fragment/ttl.lua
-- uses fragment/clock.lua
-- uses fragment/fence.lua

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

-- members returns the heartbeat zset's members, <hub id>/<key>, for the
-- waiters' scores.
local function members(scores)
  local m = {}
  for w, beat in pairs(scores) do
    m[(hub[w] or '') .. '/' .. (key[w] or w)] = beat
  end
  return m
end

-- commit writes the queue, the deadlines and the heartbeats; then the
-- lock, with write, a function, unless that is nil; then the grant and the
-- letters. It returns reply, recorded against the request (see once.lua)
-- if the lock was written.
-- A grant draws its fencing token first, before anything is written (an
-- error there leaves nothing half done), and whether or not its letter
-- reaches the waiter: the grantee that takes the grant at its next
-- attempt is answered with the counter, which must then be its own.
local function commit(reply, write)
  local drawn = grantee and fence()
  for _, w in ipairs(removed) do
    redis.call('lrem', queue, 1, w)
  end
  if appended then
    redis.call('rpush', queue, owner)
  end
  sync(zset, deadline, was.deadline)
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
    extend(hbs, keep)
  end
  if write then
    write()
  end
  if grantee then
    grant_hold(grantee, grantee)
  end
  for _, w in ipairs(wakes) do
    local who, body = w[1], w[2]
    if body == 'grant' then
      body = string.format('%.0f %.0f', drawn, micros())
    end
    if hub[who] and hub[who] ~= '' then
      letter(hub[who], key[who], body or 'wake')
    else
      redis.call(pub, channel .. ':' .. who, '0')
    end
  end
  if write then
    return once_record(reply)
  end
  return reply
end

-- delete deletes the lock and any grant of it not taken.
local function delete()
  redis.call('del', lock)
  redis.call('del', grant)
end
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
    redis.call('hset', lock, owner, 1)
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
    redis.call('hincrby', lock, owner, 1)
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
