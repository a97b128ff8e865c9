-- rw_write_acquire.lua: take one write hold of a Redisson RReadWriteLock.
-- KEYS[1] lock hash name (see rw_read_acquire.lua)
-- KEYS[2] {name}:<owner>:rwlock_timeout, the prefix of the owner's read
--         timeout keys
-- ARGV[1] lease in ms
-- ARGV[2] the owner's write field, <owner>:write
-- ARGV[3] owner id <uuid>:<n>
-- The write lock is free only when nobody holds the hash; its owner may
-- re-enter (the TTL becomes at least the lease).
-- Returns {1, n} when acquired, n being the owner's write holds now;
-- {0, pttl} while others hold it (pttl is -1 if the key has no TTL);
-- {-1, 0} when the owner itself holds a live read lock and no write lock:
-- it would wait for itself forever (Redisson waits; latchkey refuses).
-- An acquisition is recorded against its request.
-- uses prelude/once.lua
local done = once_replay()
if done then
  return done
end
local mode = redis.call('hget', KEYS[1], 'mode')
if not mode then
  redis.call('hset', KEYS[1], 'mode', 'write', ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return once_record({1, 1})
end
if mode == 'write' and redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  local n = redis.call('hincrby', KEYS[1], ARGV[2], 1)
  if redis.call('pttl', KEYS[1]) < tonumber(ARGV[1]) then
    redis.call('pexpire', KEYS[1], ARGV[1])
  end
  return once_record({1, n})
end
local reads = tonumber(redis.call('hget', KEYS[1], ARGV[3])) or 0
for i = 1, reads do
  if redis.call('exists', KEYS[2] .. ':' .. i) == 1 then
    return {-1, 0}
  end
end
return {0, redis.call('pttl', KEYS[1])}
