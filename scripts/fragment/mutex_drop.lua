-- mutex_drop.lua: the mutex's release, but for handing the lock on to a
-- waiter: the part that needs nothing of the queue's code (see
-- mutex.lua).
-- Reads the locals lock, grant and shared (the lock hash, the grant key
-- and Redisson's channel: see mutex_keys.lua), and owner, lease and pub
-- (PUBLISH or SPUBLISH), which the script defines before it.
-- Defines drop_hold() and free_alone().
-- uses fragment/record.lua

-- drop_hold takes one of owner's holds away. It returns the reply when
-- that was not the last one: 0 when holds remain (the lease restored), -1
-- when owner holds nothing; nil when the lock is to be freed.
local function drop_hold()
  local n = redis.call('hincrby', lock, owner, '-1')
  if n > 0 then
    redis.call('pexpire', lock, lease)
    return once_record(0)
  end
  if n < 0 then
    -- Not an owner: take back the field the decrement made. The hash, and
    -- the TTL of a hash another owner holds, are as they were. A fresh id
    -- holds once, so this is where a resend of its release lands.
    redis.call('hdel', lock, owner)
    return once_replay() or -1
  end
  return nil
end

-- free_alone frees the lock nobody queues for: Redisson's message is all
-- the release owes. It returns the reply, 1.
local function free_alone()
  redis.call('del', lock, grant)
  redis.call(pub, shared, '0')
  return once_record(1)
end
