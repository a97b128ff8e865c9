-- election_leader.lua: who leads an election, read at one instant.
-- KEYS[1] the election's lock (a Redisson RLock hash)
-- KEYS[2] the leader's record: hash owner, value, term
-- Returns {} if nobody holds the lock; {holder, pttl} if the holder has no
-- record (a Redisson client, or a candidate between its acquisition and
-- its record); {holder, pttl, value, term} otherwise. pttl is the lock's,
-- -1 if it has no TTL.
local holder = redis.call('hkeys', KEYS[1])[1]
if not holder then
  return {}
end
local pttl = redis.call('pttl', KEYS[1])
if redis.call('hget', KEYS[2], 'owner') ~= holder then
  return {holder, pttl}
end
return {holder, pttl, redis.call('hget', KEYS[2], 'value'), tonumber(redis.call('hget', KEYS[2], 'term'))}
