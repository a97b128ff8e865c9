-- lock_delete.lua: delete the keys of a lock that nobody holds, as
-- Redisson's RObject.delete, and wake its waiters.
-- KEYS[1] the lock's key
-- KEYS[2] the lock's channel
-- KEYS[3..] the keys kept beside it
-- ARGV[1] PUBLISH or SPUBLISH
-- ARGV[2] the message that wakes waiters
-- Returns -1 if the lock is held (nothing is deleted), 1 if a key
-- existed, else 0.
if redis.call('exists', KEYS[1]) == 1 then
  return -1
end
if #KEYS < 3 or redis.call('del', unpack(KEYS, 3)) == 0 then
  return 0
end
redis.call(ARGV[1], KEYS[2], ARGV[2])
return 1
