-- lock_acquire.lua: take a Redisson RLock hash, counting a fencing token.
-- KEYS[1] lock hash name          {owner = hold count}
-- KEYS[2] redisson_lock_token:{name}  fencing counter (RFencedLock layout)
-- ARGV[1] lease in ms
-- ARGV[2] owner id <uuid>:<n>
-- ARGV[3] "1" if the owner may re-enter, "0" if a second hold must wait
-- Returns {1, token} when acquired or re-entered (the TTL is reset to the
-- lease), {0, pttl} when held by another owner (pttl is -1 if the key has no TTL).
local count = redis.call('hget', KEYS[1], ARGV[2])
if redis.call('exists', KEYS[1]) == 1 and not (count and ARGV[3] == '1') then
  return {0, redis.call('pttl', KEYS[1])}
end
redis.call('hincrby', KEYS[1], ARGV[2], 1)
redis.call('pexpire', KEYS[1], ARGV[1])
return {1, redis.call('incr', KEYS[2])}
