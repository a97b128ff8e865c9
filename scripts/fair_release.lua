-- fair_release.lua: release one hold of a Redisson fair lock; the last
-- one frees it, granting it to a latchkey waiter first in line or waking
-- a Redisson one (see fair_decide.lua).
-- KEYS[1..8] the fair lock's (see fair_state.lua): lock hash, Redisson's
--         queue, Redisson's deadlines, heartbeats, Redisson's channel
--         prefix, grant, Hub channel prefix, fencing counter
-- ARGV[1..5] now, PUBLISH or SPUBLISH, liveness timeout, grace, counted
--         (see inputs.lua)
-- ARGV[6..8] owner id, lease, Redisson's wait timeout (see fair_state.lua)
-- Returns -1 if the owner does not hold the lock (if the lock is free the
-- head is woken anyway, as Redisson's unlock does), 0 if holds remain (TTL
-- reset), 1 if released (key deleted, head woken).
-- A release is recorded against its request (see once.lua), so that a
-- resend answers as the first run did.
-- uses fragment/once.lua
-- uses fragment/fair_state.lua
-- uses fragment/replay.lua
-- uses fragment/fair_decide.lua
-- uses fragment/fair_write.lua
read()
local head = settle(q[1])
if holds == 0 then
  if pttl == -2 then
    wake(head)
  end
  return commit(-1)
end
if holds > 1 then
  return commit(0, function()
    redis.call('hincrby', lock, owner, '-1')
    redis.call('pexpire', lock, lease)
  end)
end
free()
return commit(1, delete)
