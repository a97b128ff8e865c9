-- election_proclaim.lua: record the value of a leader that holds the
-- election's lock, and tell the observers.
-- KEYS[1] the election's lock (a Redisson RLock hash)
-- KEYS[2] the leader's record: hash owner, value, term
-- KEYS[3] the channel of changes
-- ARGV[1] the leader's owner id
-- ARGV[2] its value
-- ARGV[3] its term (the fencing token of its hold)
-- ARGV[4] PUBLISH or SPUBLISH
-- Returns 1 if recorded, 0 if the owner does not hold the lock.
if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
  return 0
end
redis.call('hset', KEYS[2], 'owner', ARGV[1], 'value', ARGV[2], 'term', ARGV[3])
redis.call(ARGV[4], KEYS[3], ARGV[3])
return 1
