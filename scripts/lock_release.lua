-- lock_release.lua: release one hold of a Redisson RLock hash.
-- KEYS[1] lock hash name
-- KEYS[2] redisson_lock__channel:{name}
-- ARGV[1] owner id
-- ARGV[2] lease in ms, restored when holds remain
-- ARGV[3] PUBLISH or SPUBLISH
-- Returns -1 if the owner holds nothing, 0 if holds remain, 1 if released
-- (the key is deleted and "0" is published, as Redisson's unlock does).
if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
  return -1
end
if redis.call('hincrby', KEYS[1], ARGV[1], -1) > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  return 0
end
redis.call('del', KEYS[1])
redis.call(ARGV[3], KEYS[2], '0')
return 1
