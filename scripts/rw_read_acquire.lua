-- rw_read_acquire.lua: take one read hold of a Redisson RReadWriteLock.
-- KEYS[1] lock hash name: mode = read|write, <owner> = read holds,
--         <owner>:write = write holds
-- KEYS[2] {name}:<owner>:rwlock_timeout, the prefix of the owner's timeout
--         keys: hold i of the owner is the key <prefix>:i with that hold's lease
-- KEYS[3] latchkey_rwlock_writers:{name}, the writers' marker (see
--         rw_write_acquire.lua): zset of waiting writers -> deadline (ms)
-- KEYS[4] latchkey_rwlock_epoch:{name}, how many write releases there
--         were while readers were held back (see rw_release.lua)
-- ARGV[1] lease in ms
-- ARGV[2] owner id <uuid>:<n>
-- ARGV[3] the owner's write field, <owner>:write
-- ARGV[4] "1" if the owner may re-enter (its id is not fresh for this call)
-- ARGV[5] the epoch this call was first held back in, or "" if it was not
-- ARGV[6] how long the epoch lives after a reader was held back, ms
-- Readers share the lock, and the owner of the write lock may read too
-- (Redisson's downgrade). Writer preference, sync.RWMutex's rule: while a
-- latchkey writer waits (the marker holds an entry whose deadline has not
-- passed), a new reader waits too, but one held back before the latest
-- write release (its epoch has passed) enters, so that writers cannot
-- starve readers either. An owner that already holds a read (or the write)
-- lock re-enters all the same, so that it never waits for a writer that
-- waits for it. Redisson's readers know nothing of the marker.
-- Returns {1, n} when acquired, n being the owner's read holds now (the hash
-- TTL becomes the longest lease of any hold); {0, pttl, epoch} while
-- another owner holds the write lock (pttl is -1 if the key has no TTL);
-- {0, ms, epoch} while a writer waits, ms being how long until the last
-- waiting writer's deadline, should no writer attempt again.
-- An acquisition is recorded against its request.
-- uses fragment/replay.lua
-- uses fragment/clock.lua
-- uses fragment/ttl.lua

-- writerWaits returns how many ms the marker still holds a waiting writer
-- for (0: none), dropping it once every deadline has passed.
local function writerWaits()
  local last = redis.call('zrange', KEYS[3], '-1', '-1', 'WITHSCORES')
  if #last == 0 then
    return 0
  end
  local left = tonumber(last[2]) - millis()
  if left <= 0 then
    redis.call('del', KEYS[3])
    return 0
  end
  return left
end

-- epoch returns the current epoch, and keeps it for ARGV[6] from now.
local function epoch()
  local e = redis.call('get', KEYS[4])
  if not e then
    e = '0'
    redis.call('set', KEYS[4], e, 'px', ARGV[6])
  else
    redis.call('pexpire', KEYS[4], ARGV[6])
  end
  return tonumber(e)
end

local mode = redis.call('hget', KEYS[1], 'mode')
if mode == 'write' then
  if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
    return {0, redis.call('pttl', KEYS[1]), epoch()}
  end
elseif not (mode and ARGV[4] == '1' and redis.call('hexists', KEYS[1], ARGV[2]) == 1) then
  local left = writerWaits()
  if left > 0 then
    local e = epoch()
    if ARGV[5] == '' or tonumber(ARGV[5]) == e then
      return {0, left, e}
    end
  end
end
if not mode then
  redis.call('hset', KEYS[1], 'mode', 'read')
end
local n = redis.call('hincrby', KEYS[1], ARGV[2], '1')
redis.call('set', KEYS[2] .. ':' .. n, '1', 'px', ARGV[1])
extend(KEYS[1], ARGV[1])
return once_record({1, n})
