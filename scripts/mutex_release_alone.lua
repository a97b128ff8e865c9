-- mutex_release_alone.lua: release one hold of a mutex that nobody queues
-- for, with only the keys and arguments that takes (see
-- mutex_release.lua, whose fast path it is). It defines no function.
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
-- against its request (see once.lua), as "n<reply>".
-- uses fragment/once.lua
local lock, grant, deadlines, shared = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local owner, lease, pub = ARGV[1], ARGV[2], ARGV[4]
local fresh, once_guess = ARGV[3] == '0', 'n1'
-- uses fragment/owner_replay.lua
if redis.call('exists', deadlines) == 1 then
  -- A fresh id's full release shares this request's record. An owner's
  -- goes with a record of its own: this answer is recorded, so that no
  -- copy of this request still on its way takes a hold down after it.
  if not fresh and once_ttl > 0 then
    redis.call('set', once_key, once_tag .. 'n-2', 'px', once_px)
  end
  return -2
end
local reply = 1
local n = redis.call('hincrby', lock, owner, '-1')
if n > 0 then
  redis.call('pexpire', lock, lease)
  reply = 0
elseif n == 0 then
  redis.call('del', lock, grant)
  redis.call(pub, shared, '0')
else
  -- Not an owner: take back the field the decrement made.
  redis.call('hdel', lock, owner)
  -- A fresh id's full release after this one shares its record.
  if fresh and once_ttl > 0 then
    -- inline fragment/once_read.lua
  end
  -- inline fragment/once_restore.lua
  return (once_rec == 'n1' or once_rec == 'n2') and 1 or -1
end
if once_ttl > 0 and (fresh or reply ~= 1) then
  redis.call('set', once_key, once_tag .. (reply == 1 and 'n1' or 'n0'), 'px', once_px)
end
return reply
