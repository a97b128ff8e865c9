-- election_resign.lua: delete a leader's record once it released the
-- election's lock, and tell the observers.
-- KEYS[1] the leader's record: hash owner, value, term
-- KEYS[2] the channel of changes
-- ARGV[1] the leader's owner id
-- ARGV[2] PUBLISH or SPUBLISH
-- Returns 1 if the record was the owner's, 0 if another leader's, or gone.
-- The message goes out either way: the lock was released.
local mine = redis.call('hget', KEYS[1], 'owner') == ARGV[1]
if mine then
  redis.call('del', KEYS[1])
end
redis.call(ARGV[2], KEYS[2], '0')
return mine and 1 or 0
