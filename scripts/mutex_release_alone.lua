-- mutex_release_alone.lua: release one hold of a mutex that nobody queues
-- for, with only the keys and arguments that takes (see
-- mutex_release.lua, whose fast path it is).
-- KEYS[1] lock hash, KEYS[2] grant, KEYS[3] deadlines, KEYS[4] Redisson's
--         channel (see mutex_keys.lua)
-- ARGV[1] owner id <uuid>:<n>
-- ARGV[2] lease in ms, restored when holds remain
-- ARGV[3] "1" if the owner may re-enter, "0" for an id fresh for one
--         acquisition
-- ARGV[4] PUBLISH or SPUBLISH
-- Returns -2, having done nothing, when waiters queue (mutex_release.lua
-- hands the lock on), else as mutex_release.lua: -1 if the owner holds
-- nothing, 0 if holds remain, 1 if released. A release is recorded
-- against its request (see once.lua).
-- uses fragment/once.lua
local lock, grant, deadlines, shared = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local owner, lease, pub = ARGV[1], ARGV[2], ARGV[4]
if ARGV[3] ~= '0' then
  local done = once_replay()
  if done then
    return done
  end
end
if redis.call('exists', deadlines) == 1 then
  return -2
end
-- uses fragment/mutex_drop.lua
return drop_hold() or free_alone()
