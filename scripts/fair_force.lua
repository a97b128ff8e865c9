-- fair_force.lua: delete a Redisson fair lock whoever holds it
-- (ForceUnlock), granting it to a latchkey waiter first in line or waking
-- a Redisson one (see fair_decide.lua).
-- KEYS[1..8] the fair lock's (see fair_state.lua): lock hash, Redisson's
--         queue, Redisson's deadlines, heartbeats, Redisson's channel
--         prefix, grant, Hub channel prefix, fencing counter
-- KEYS[9] latchkey_lock__forced:{name}, on which the owners forced out are
--         published, space-separated, before the wake-up: a watch tells a
--         force-unlock from a release by it
-- ARGV[1..5] now, PUBLISH or SPUBLISH, liveness timeout, grace, counted
--         (see inputs.lua)
-- ARGV[6..8] "" (no owner), lease, Redisson's wait timeout (see
--         fair_state.lua)
-- Returns 1 if the lock existed (deleted, head woken), 0 otherwise.
-- uses fragment/once.lua
-- uses fragment/fair_state.lua
-- uses fragment/replay.lua
-- uses fragment/fair_decide.lua
-- uses fragment/fair_write.lua
local forced_channel = KEYS[9]
read()
settle(q[1])
if pttl ~= -2 then
  -- Told before the wake-up, so that a watch hears it first.
  redis.call(pub, forced_channel, table.concat(redis.call('hkeys', lock), ' '))
  free()
  return commit(1, delete)
end
return commit(0)
