-- mutex_take_free.lua: the first try of a plain Lock or TryLock: take the
-- mutex if it is free, with only the keys and arguments that takes (see
-- mutex_acquire.lua, whose fast path it is). It never queues.
-- KEYS[1] lock hash, KEYS[2] fencing counter, KEYS[3] grant (see
--         mutex_keys.lua)
-- ARGV[1] owner id <uuid>:<n>, fresh for this one acquisition
-- ARGV[2] lease in ms
-- Returns {1, token, 1} when acquired, or found acquired by an earlier
-- send of this request (the TTL is reset to the lease; the token is the
-- one drawn then, or a new one if the counter expired since); {0, pttl}
-- when the lock is held, or a turn at it was given (pttl is how long that
-- lasts, -1 if the key has no TTL).
-- A fresh id needs no request record (see mutex_acquire.lua): a resend
-- finds the id holding.
local lock, token, grant = KEYS[1], KEYS[2], KEYS[3]
local owner, lease = ARGV[1], ARGV[2]
-- The free lock, taken before any function is defined: the counter's
-- start and every 256th token need fence.lua's, below.
local n, t
if redis.call('exists', lock, grant) == 0 then
  n = redis.call('hincrby', lock, owner, '1')
  redis.call('pexpire', lock, lease)
  t = redis.call('incr', token)
  if t >= 1e15 and t % 256 ~= 0 then
    return {1, t, n}
  end
end
-- uses fragment/fence.lua
if n then
  return {1, fenced(t), n}
end
if redis.call('exists', lock) == 0 then
  return {0, redis.call('pttl', grant)} -- a turn given to a waiter
end
n = redis.call('hget', lock, owner)
if n then
  redis.call('pexpire', lock, lease)
  return {1, tonumber(redis.call('get', token)) or fence(), tonumber(n)}
end
return {0, redis.call('pttl', lock)}
