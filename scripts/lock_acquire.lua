-- lock_acquire.lua: take a Redisson RLock hash, counting a fencing token.
-- KEYS[1] lock hash name          {owner = hold count}
-- KEYS[2] redisson_lock_token:{name}  fencing counter (RFencedLock layout),
--         which lives a day from its start and from every 256th token, as
--         fence.lua's does (nothing reads RedLock's tokens: none is seeded)
-- ARGV[1] lease in ms
-- ARGV[2] owner id <uuid>:<n>
-- ARGV[3] "1": the owner may re-enter (its count goes up);
--         "0": the id is fresh for this one acquisition, so finding it
--              already present means this is a resent request that was
--              applied before: it succeeds again without a second hold.
-- Returns {1, token} when acquired or re-entered (the TTL is reset to the
-- lease), {0, pttl} when held by another owner (pttl is -1 if the key has no TTL).
if redis.call('exists', KEYS[1]) == 1 then
  if not redis.call('hget', KEYS[1], ARGV[2]) then
    return {0, redis.call('pttl', KEYS[1])}
  end
  if ARGV[3] == '0' then
    return {1, tonumber(redis.call('get', KEYS[2]) or '0')}
  end
end
redis.call('hincrby', KEYS[1], ARGV[2], '1')
redis.call('pexpire', KEYS[1], ARGV[1])
local t = redis.call('incr', KEYS[2])
if t == 1 or t % 256 == 0 then
  redis.call('pexpire', KEYS[2], '86400000') -- a day, as fence.lua's
end
return {1, t}
