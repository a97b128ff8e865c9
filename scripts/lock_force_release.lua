-- lock_force_release.lua: delete a lock whoever holds it.
-- KEYS[1] lock key
-- KEYS[2] the lock's channel
-- ARGV[1] PUBLISH or SPUBLISH
-- ARGV[2] the message that wakes waiters ("0" for RLock, "1" for a write lock)
-- Returns 1 if the key existed (and the message was published), 0 otherwise.
if redis.call('del', KEYS[1]) == 1 then
  redis.call(ARGV[1], KEYS[2], ARGV[2])
  return 1
end
return 0
