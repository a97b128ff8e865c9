-- mutex_take_owner.lua: the first try of a Lock or TryLock by an owner
-- that may re-enter and holds nothing through the caller's handle: take
-- the mutex if it is free, with only the keys and arguments that takes
-- (see mutex_acquire.lua, whose fast path it is, and mutex_take_free.lua,
-- a fresh id's).
-- KEYS[1] lock hash, KEYS[2] fencing counter, KEYS[3] grant (see
--         mutex_keys.lua)
-- ARGV[1] owner id <uuid>:<n>
-- ARGV[2] lease in ms
-- Returns {1, token, 1} when acquired; {-1}, having done nothing, when
-- the lock is not free or a turn at it was given, or when this request
-- ran before: mutex_acquire.lua settles those, under the same record.
-- The acquisition is recorded against its request (see once.lua), in
-- the same command that reads what the lane held (SET ... GET), one
-- fewer than reading the record first: a request that ran before (its
-- stamp on the lane, or given up) finds the lock free only if its hold
-- ended since, and then puts the lane and the lock back as they were.
-- uses fragment/once.lua
local lock, token, grant = KEYS[1], KEYS[2], KEYS[3]
if redis.call('exists', lock, grant) > 0 then
  return {-1}
end
local n = redis.call('hincrby', lock, ARGV[1], '1')
redis.call('pexpire', lock, ARGV[2])
local t = redis.call('incr', token)
if t < 1e15 or t % 256 == 0 then
  -- The counter's start, and every 256th token.
  -- uses fragment/fence.lua
  t = fenced(t)
end
if once_ttl > 0 then
  once_held = redis.call('set', once_key, once_tag .. string.format('a1,%d,%d', t, n), 'px', once_px, 'get')
  -- inline fragment/once_match.lua
  if once_rec then
    redis.call('set', once_key, once_held, 'px', once_px)
    redis.call('del', lock)
    return {-1}
  end
end
return {1, t, n}
