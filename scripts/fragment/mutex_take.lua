-- mutex_take.lua: the mutex's fast path: a free lock that no turn was
-- given on is taken without a look at the queue (see mutex.lua), before
-- the queue's code is defined.
-- Reads the locals lock, token and grant (the lock hash, the fencing
-- counter and the grant key: see mutex_keys.lua) and owner and lease,
-- which the script defines before it.
-- Defines take_free().
-- uses fragment/fence.lua

-- take_free takes the lock for owner if it is free and no turn at it was
-- given, and returns the reply {1, token, holds}, for the script to
-- record if it records its requests; else it returns nil and whether the
-- lock is held.
local function take_free()
  if redis.call('exists', lock, grant) > 0 then
    return nil, redis.call('exists', lock) == 1
  end
  local n = redis.call('hincrby', lock, owner, '1')
  redis.call('pexpire', lock, lease)
  return {1, fence(), n}
end
