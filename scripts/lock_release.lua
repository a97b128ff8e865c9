-- lock_release.lua: release one hold of a Redisson RLock hash.
-- KEYS[1] lock hash name
-- KEYS[2] redisson_lock__channel:{name}
-- ARGV[1] owner id
-- ARGV[2] lease in ms, restored when holds remain
-- ARGV[3] PUBLISH or SPUBLISH
-- Returns -1 if the owner holds nothing, 0 if holds remain, 1 if released
-- (the key is deleted and "0" is published, as Redisson's unlock does).
-- A release is recorded against its request.
-- uses fragment/replay.lua
local n = redis.call('hincrby', KEYS[1], ARGV[1], '-1')
if n > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  return once_record(0)
end
if n < 0 then
  -- Not an owner: take back the field the decrement made. The hash, and
  -- the TTL of a hash another owner holds, are as they were.
  redis.call('hdel', KEYS[1], ARGV[1])
  return -1
end
redis.call('del', KEYS[1])
redis.call(ARGV[3], KEYS[2], '0')
return once_record(1)
