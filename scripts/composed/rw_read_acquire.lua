-- once.lua: the request record, so that a request sent twice (go-redis
-- resends a command whose reply was lost) is applied once and answered the
-- same way both times.
--
-- Reads the last of KEYS and of ARGV, which the runner appends to those
-- the script declares, and takes them off again, so the script sees its
-- KEYS and ARGV as its header describes them:
-- KEYS[#KEYS] latchkey_once:{name}:<request id>, the record of this request
-- KEYS[#KEYS-n..#KEYS-1] records of the client's requests that were
--             answered, and are done with, to delete (n is ARGV[#ARGV-1])
-- ARGV[#ARGV] how long the record lives, in ms; 0 when repeating the
--             request is harmless, and then nothing is read or written;
--             negative to resolve a request its caller gave up on (below)
-- ARGV[#ARGV-1] n, how many records to delete come before this one's
-- A record holds the reply: "n<integer>" or "a<integer>,<integer>,...", or
-- "x" for a request cancelled before it applied.
-- Defines once_replay() and once_record(reply); a request to resolve is
-- answered here, and the script does not run.
local once_key = table.remove(KEYS)
local once_ttl = tonumber(table.remove(ARGV))
local done_with = tonumber(table.remove(ARGV))
if done_with > 0 then
  local old = {}
  for i = 1, done_with do
    old[i] = table.remove(KEYS)
  end
  redis.call('del', unpack(old))
end

-- once_decode turns a record back into the reply it holds; a cancelled
-- request answers CANCELLED, and does nothing.
local function once_decode(rec)
  if rec == 'x' then
    return redis.status_reply('CANCELLED')
  end
  local out = {}
  for v in string.gmatch(string.sub(rec, 2), '[^,]+') do
    out[#out + 1] = tonumber(v)
  end
  if string.sub(rec, 1, 1) == 'n' then
    return out[1]
  end
  return out
end

-- A request to resolve answers with the record of the request, if it
-- applied; otherwise it records the request as cancelled, so that a copy
-- of it still on its way does nothing, and answers CANCELLED.
if once_ttl < 0 then
  local rec = redis.call('get', once_key)
  if rec then
    return once_decode(rec)
  end
  redis.call('set', once_key, 'x', 'px', -once_ttl)
  return redis.status_reply('CANCELLED')
end

-- once_replay returns the reply recorded by an earlier run of this request,
-- or nil when there is none.
local function once_replay()
  if once_ttl == 0 then
    return nil
  end
  local rec = redis.call('get', once_key)
  if not rec then
    return nil
  end
  return once_decode(rec)
end

-- once_record records reply, an integer or an array of integers, as the
-- answer to a resend of this request, and returns it.
local function once_record(reply)
  if once_ttl > 0 then
    local rec
    if type(reply) == 'table' then
      local parts = {}
      for i, v in ipairs(reply) do
        parts[i] = string.format('%d', v)
      end
      rec = 'a' .. table.concat(parts, ',')
    else
      rec = 'n' .. string.format('%d', reply)
    end
    redis.call('set', once_key, rec, 'px', once_ttl)
  end
  return reply
end
-- replay.lua: answers a resent request as its first run did, first thing,
-- for a script whose every run that changes state is recorded (see
-- once.lua). A request not applied before goes on to the script.
-- Reads no KEYS or ARGV of its own. Defines nothing.
-- uses fragment/once.lua
local replayed = once_replay()
if replayed then
  return replayed
end
-- clock.lua: the server's clock, read once per script (TIME), so that
-- every use in one run sees the same instant.
-- Reads no KEYS or ARGV. Defines micros() and millis(): the server's clock
-- in microseconds and in milliseconds since the epoch.
local clock

local function micros()
  if not clock then
    local t = redis.call('time')
    clock = tonumber(t[1]) * 1000000 + tonumber(t[2])
  end
  return clock
end

local function millis()
  return math.floor(micros() / 1000)
end
-- ttl.lua: a key's TTL raised, never shortened.
-- Reads no KEYS or ARGV. Defines extend(key, ms).

-- extend sets the TTL of key to ms unless it has more left; a key without
-- a TTL gets one.
local function extend(key, ms)
  if redis.call('pttl', key) < tonumber(ms) then
    redis.call('pexpire', key, ms)
  end
end
-- rw_read_acquire.lua: take one read hold of a Redisson RReadWriteLock.
-- KEYS[1] lock hash name: mode = read|write, <owner> = read holds,
--         <owner>:write = write holds
-- KEYS[2] {name}:<owner>:rwlock_timeout, the prefix of the owner's timeout
--         keys: hold i of the owner is the key KEYS[2]:i with that hold's lease
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
  local last = redis.call('zrange', KEYS[3], -1, -1, 'WITHSCORES')
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
local n = redis.call('hincrby', KEYS[1], ARGV[2], 1)
redis.call('set', KEYS[2] .. ':' .. n, 1, 'px', ARGV[1])
extend(KEYS[1], ARGV[1])
return once_record({1, n})
