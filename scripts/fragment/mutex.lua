-- mutex.lua: the mutex's handoff, on a Redisson RLock hash and latchkey's
-- waiter queue beside it (see queue.lua).
--
-- Mutual exclusion is the hash's, exactly as Redisson's; the queue decides
-- who is next. A waiter that finds the lock held joins the queue and
-- learns its rank. A release publishes "0" on the shared Redisson channel,
-- as Redisson does, and grants the lock to the waiter at the head of the
-- queue in the same call: that waiter becomes the holder (its owner field,
-- count 1, a fresh fencing token) with a lease of the grace only, and a
-- letter "@<key> <token> <server clock in µs>" on the channel of its
-- client's pub/sub Hub tells it, so that it returns from Lock without
-- another round trip. The waiter then extends the lease to its own (or,
-- having given up, gives the lock back); one that died or missed the
-- letter costs at most the grace. A waiter that heads the queue after a
-- grant is told so with "@<key> next". Redisson clients know nothing of
-- the queue: to them the lock is held by an ordinary owner.
--
-- Redisson's waiters are not starved, though: they attempt when they hear
-- the release's "0", and would find the lock granted every time while
-- latchkey waiters queue. So they have a place in the queue (see
-- queue.lua). A release whose "0" more subscribers of the channel heard
-- (see subscribers.lua) than latchkey listens with (none: a latchkey
-- waiter listens on Redisson's channel only while a Redisson client
-- holds, or heads a RedLock's queue, whose releases never yield) puts
-- Redisson's entry at the tail, unless it is queued. When a release finds it at the head and its "0" was heard, it
-- grants nothing: it leaves the lock free for Redisson's waiters, and
-- gives the next latchkey waiter its turn instead, "@<key> turn". That
-- waiter takes the free lock once Redisson's waiters had a moment to
-- (handoff.Yield), and until then, or the grace, no other latchkey caller
-- may (the grant key names it). So a Redisson waiter waits about as many
-- handoffs as latchkey waiters were queued when it was heard.
--
-- Reads the KEYS through the locals of mutex_keys.lua, which comes before
-- it, and ARGV[1..5] (see inputs.lua).
-- Defines yield_head(), grant_head(heard, drawn, first), hand_on(yield,
-- heard_by, drawn, first) and free(yield), yield being "1" to yield to
-- Redisson's waiters, "0" not to.
-- uses fragment/clock.lua
-- uses fragment/fence.lua
-- uses fragment/mutex_entry.lua
-- uses fragment/queue.lua
-- uses fragment/hold.lua
-- uses fragment/subscribers.lua

-- yield_head gives the head of the queue its turn at the free lock, once
-- Redisson's waiters had theirs; heads whose client is gone are dropped
-- on the way, a few at most.
local function yield_head()
  local head = tell_head('turn', 8)
  if head then
    redis.call('set', grant, head, 'PX', grace_ms)
  end
end

-- grant_head makes the first waiter in line the holder of the free lock,
-- for the grace time, and writes it a letter with its token and the
-- server's clock. Waiters whose client is gone are dropped on the way (a
-- few at most per call, to bound its work: the next release drops more).
-- Redisson's entry at the head yields the lock to Redisson's waiters if
-- heard says one may be listening, and is dropped otherwise. The first
-- grant takes the token drawn, if one was, and first, if given, is the
-- head taken off the queue already (see hand_on).
local function grant_head(heard, drawn, first)
  if not waiting() then
    return
  end
  for _ = 1, 8 do
    local head = first or redis.call('lpop', queue)
    first = nil
    if not head then
      return
    end
    redis.call('zrem', deadlines, head)
    if head == redisson then
      if heard then
        yield_head()
        return
      end
    else
      local t = drawn and fenced(drawn) or fence()
      drawn = nil
      if tell(head, string.format('%.0f %.0f', t, micros())) then
        grant_hold(owner_of(head), head)
        break
      end
    end
  end
  tell_next(8)
end

-- hand_on tells Redisson's waiters that the lock is free, and grants it to
-- the next in line. With yield "1", a Redisson client may have heard
-- that: Redisson's waiters take their place in line, if latchkey's wait.
-- A release that told them itself passes how many heard (PUBLISH's
-- answer); one that took the head off the queue for a grant that it could
-- not complete passes that head, and the token it drew for it.
local function hand_on(yield, heard_by, drawn, first)
  heard_by = heard_by or redis.call(pub, shared, '0')
  local heard = heard_by > 0 and yield == '1' and subscribers(shared) > 0
  purge()
  if heard and waiting() and redis.call('lindex', queue, '0') then
    join(redisson)
  end
  grant_head(heard, drawn, first)
end

-- free deletes the lock, and any grant of it not taken, and hands it on.
local function free(yield)
  redis.call('del', lock, grant)
  hand_on(yield)
end
