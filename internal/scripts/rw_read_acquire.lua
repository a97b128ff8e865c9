-- rw_read_acquire.lua: take one read hold of a Redisson RReadWriteLock.
-- KEYS[1] lock hash name: mode = read|write, <owner> = read holds,
--         <owner>:write = write holds
-- KEYS[2] {name}:<owner>:rwlock_timeout, the prefix of the owner's timeout
--         keys: hold i of the owner is the key KEYS[2]:i with that hold's lease
-- ARGV[1] lease in ms
-- ARGV[2] owner id <uuid>:<n>
-- ARGV[3] the owner's write field, <owner>:write
-- Readers share the lock, and the owner of the write lock may read too
-- (Redisson's downgrade); readers never queue behind waiting writers.
-- Returns {1, n} when acquired, n being the owner's read holds now (the hash
-- TTL becomes the longest lease of any hold), or {0, pttl} while another
-- owner holds the write lock (pttl is -1 if the key has no TTL).
-- An acquisition is recorded against its request.
-- uses prelude/once.lua
local done = once_replay()
if done then
  return done
end
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == 'write' and redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
  return {0, redis.call('pttl', KEYS[1])}
end
if not mode then
  redis.call('hset', KEYS[1], 'mode', 'read')
end
local n = redis.call('hincrby', KEYS[1], ARGV[2], 1)
redis.call('set', KEYS[2] .. ':' .. n, 1, 'px', ARGV[1])
if redis.call('pttl', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('pexpire', KEYS[1], ARGV[1])
end
return once_record({1, n})
