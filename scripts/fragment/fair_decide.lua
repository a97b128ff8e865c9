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
-- uses fragment/numbers.lua

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
