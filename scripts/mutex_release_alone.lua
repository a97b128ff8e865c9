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
-- A fresh id holds once: its release, recorded, before any function is
-- defined. Its record is the reply 1's, "n1" (see once.lua).
if ARGV[3] == '0' then
  if redis.call('exists', deadlines) == 1 then
    return -2
  end
  if redis.call('hincrby', lock, owner, '-1') == 0 then
    redis.call('del', lock, grant)
    redis.call(pub, shared, '0')
    if once_ttl > 0 then
      redis.call('set', once_key, 'n1', 'px', once_px)
    end
    return 1
  end
  redis.call('hdel', lock, owner)
  -- A resend whose first copy released it finds its record.
  local rec = once_ttl > 0 and redis.call('get', once_key)
  return rec == 'n1' and 1 or -1
end
-- uses fragment/replay.lua
if redis.call('exists', deadlines) == 1 then
  return -2
end
-- uses fragment/mutex_drop.lua
return drop_hold() or free_alone()
