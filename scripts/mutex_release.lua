-- mutex_release.lua: release one hold of the mutex; the last one frees
-- the lock and grants it to the first waiter in line (see mutex.lua).
-- KEYS[1..7] the mutex's (see mutex_keys.lua): lock hash, fencing counter,
--         queue, deadlines, Redisson's channel, Hub channel prefix, grant
-- ARGV[1..5] now, PUBLISH or SPUBLISH, queue entry life, grace, counted
--         (see inputs.lua)
-- ARGV[6] owner id <uuid>:<n>
-- ARGV[7] lease in ms, restored when holds remain
-- ARGV[8] "1" if the owner may re-enter, "0" for an id fresh for one
--         acquisition
-- ARGV[9] "1" to yield to Redisson's waiters (see mutex.lua)
-- Returns -1 if the owner holds nothing, 0 if holds remain, 1 if released,
-- 2 if released while waiters queued (the lock handed on to them).
-- A release is recorded against its request (see once.lua), as
-- "n<reply>", so a resend answers as the first run did.
-- Up to the hand-on, which only a release that frees a lock with waiters
-- reaches, it defines no function (mutex_release_alone.lua, its fast
-- path for a hold that found the lock free, has none at all).
-- uses fragment/once.lua
-- uses fragment/mutex_keys.lua
local owner, lease = ARGV[6], ARGV[7]
local fresh = ARGV[8] == '0'
-- uses fragment/owner_replay.lua
local reply = 1
local n = redis.call('hincrby', lock, owner, '-1')
if n > 0 then
  redis.call('pexpire', lock, lease)
  reply = 0
elseif n < 0 then
  -- Not an owner: take back the field the decrement made. The hash, and
  -- the TTL of a hash another owner holds, are as they were.
  redis.call('hdel', lock, owner)
  if fresh and once_ttl > 0 then
    -- inline fragment/once_read.lua
  end
  if once_rec == 'n1' or once_rec == 'n2' then
    return tonumber(string.sub(once_rec, 2))
  end
  return -1
else
  -- The last hold: free the lock, and any grant of it not taken.
  redis.call('del', lock, grant)
  if redis.call('exists', deadlines) == 0 then
    -- Nobody queues: Redisson's message is all the release owes.
    redis.call(ARGV[2], shared, '0')
  else
    -- uses fragment/inputs.lua
    -- uses fragment/mutex.lua
    known = true
    hand_on(ARGV[9])
    reply = 2
  end
end
if once_ttl > 0 then
  local rec = reply == 0 and 'n0' or reply == 1 and 'n1' or 'n2'
  redis.call('set', once_key, once_tag .. rec, 'px', once_px)
end
return reply
