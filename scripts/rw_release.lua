-- rw_release.lua: release one read or write hold of a Redisson RReadWriteLock.
-- KEYS[1] lock hash name (see rw_read_acquire.lua)
-- KEYS[2] redisson_rwlock:{name}, the lock's channel
-- KEYS[3] {name}:<owner>:rwlock_timeout, the prefix of the owner's timeout keys
-- KEYS[4] {name}, the prefix of every owner's timeout keys
-- KEYS[5] latchkey_rwlock_epoch:{name}, the epoch of held-back readers
--         (see rw_read_acquire.lua)
-- ARGV[1] the field to release: <owner> for a read hold, <owner>:write for a
--         write hold
-- ARGV[2] "read" or "write"
-- ARGV[3] PUBLISH or SPUBLISH
-- A read release deletes the timeout key of the owner's last hold. Then the
-- hash TTL becomes the longest lease left among the read holds of every
-- owner, never shortening a writer's; when no writer and no live read hold
-- is left (only crashed readers whose leases ran out: Redisson's zombie
-- cleanup), the hash is deleted and waiters are woken: "0" after a read
-- release, "1" (wake all) after a write release. A write release that leaves
-- its owner's read holds switches the mode to read and also publishes "1",
-- so that waiting readers enter at once. A write release (the owner's
-- last write hold) while readers were held back starts a new epoch: those
-- readers enter even if another writer waits by then.
-- Returns -1 if the owner holds no such hold (nothing changes); else the
-- owner's holds of that kind left, 0 after the last; -2 if a read release
-- found the owner's remaining read holds all expired (they are dropped: the
-- hold was lost).
-- A release is recorded against its request.
-- uses fragment/replay.lua
local mode = redis.call('hget', KEYS[1], 'mode')
if not mode or redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
  return -1
end
local write = ARGV[2] == 'write'
if write and mode ~= 'write' then
  return -1
end
local n = redis.call('hincrby', KEYS[1], ARGV[1], '-1')
local res = n
if write then
  if n > 0 then
    return once_record(n)
  end
  if redis.call('exists', KEYS[5]) == 1 then
    redis.call('incr', KEYS[5])
  end
else
  redis.call('del', KEYS[3] .. ':' .. (n + 1))
  if n > 0 then
    res = -2
    for i = 1, n do
      if redis.call('exists', KEYS[3] .. ':' .. i) == 1 then
        res = n
        break
      end
    end
  end
end
if res <= 0 then
  redis.call('hdel', KEYS[1], ARGV[1])
end

-- The longest lease left among all read holds.
local ttl = 0
local fields = redis.call('hgetall', KEYS[1])
for j = 1, #fields, 2 do
  local f, c = fields[j], tonumber(fields[j + 1])
  if c and f ~= 'mode' and string.sub(f, -6) ~= ':write' then
    for i = 1, c do
      local t = redis.call('pttl', KEYS[4] .. ':' .. f .. ':rwlock_timeout:' .. i)
      if t > ttl then
        ttl = t
      end
    end
  end
end

if mode == 'write' and not write then
  -- The writer (this owner) still holds: only ever extend its TTL.
  local cur = redis.call('pttl', KEYS[1])
  if cur >= 0 and ttl > cur then
    redis.call('pexpire', KEYS[1], ttl)
  end
  return once_record(res)
end
local msg = '0'
if write then
  msg = '1'
end
if ttl > 0 then
  redis.call('pexpire', KEYS[1], ttl)
  if write then
    redis.call('hset', KEYS[1], 'mode', 'read')
    redis.call(ARGV[3], KEYS[2], msg)
  end
  return once_record(res)
end
redis.call('del', KEYS[1])
redis.call(ARGV[3], KEYS[2], msg)
return once_record(res)
