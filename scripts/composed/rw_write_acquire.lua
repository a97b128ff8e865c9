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
-- rw_write_acquire.lua: take one write hold of a Redisson RReadWriteLock.
-- KEYS[1] lock hash name (see rw_read_acquire.lua)
-- KEYS[2] {name}:<owner>:rwlock_timeout, the prefix of the owner's read
--         timeout keys
-- KEYS[3] latchkey_rwlock_writers:{name}, the writers' marker: zset of
--         waiting writers' entries -> deadline (ms, server clock)
-- KEYS[4] latchkey_rwlock_token:{name}, the write holds' fencing counter
--         (latchkey's own: Redisson's read-write lock keeps none)
-- ARGV[1] lease in ms
-- ARGV[2] the owner's write field, <owner>:write
-- ARGV[3] owner id <uuid>:<n>
-- ARGV[4] the waiting call's entry in the marker
-- ARGV[5] how long an entry lives unless its writer attempts again, ms; 0
--         for a single try, which leaves no entry
-- ARGV[6] "1" if an earlier attempt of this call may have left its entry
-- The write lock is free only when nobody holds the hash; its owner may
-- re-enter (the TTL becomes at least the lease). A writer that must wait
-- (re)writes its entry with a deadline ARGV[5] from now: while an entry
-- lives, new latchkey readers wait behind it (writer preference); a writer
-- that died costs them at most ARGV[5]. A writer that acquires, or finds
-- that it would wait for itself, removes its entry.
-- Each acquisition draws the next fencing token, a re-entry too, as the
-- mutex's does (see fence.lua); a read hold draws none: readers hold
-- together, and a token orders one holder after another.
-- Returns {1, n, token} when acquired, n being the owner's write holds
-- now and token the hold's fencing token;
-- {0, pttl} while others hold it (pttl is -1 if the key has no TTL);
-- {-1, 0} when the owner itself holds a live read lock and no write lock:
-- it would wait for itself forever (Redisson waits; latchkey refuses).
-- An acquisition is recorded against its request.
-- uses fragment/replay.lua
-- uses fragment/clock.lua
-- uses fragment/ttl.lua
local token = KEYS[4]
-- fence.lua: a lock's fencing token: the mutex's (RFencedLock's counter),
-- a fair lock's or a write lock's (latchkey's own counters).
-- Reads the local token (the counter's key), which the script, or the
-- fragment that names its KEYS (mutex_keys.lua, fair_state.lua), defines
-- before it.
-- Defines fence().
-- uses fragment/clock.lua

-- fence returns the next fencing token. A counter that is missing (new,
-- expired, or lost to a restart without persistence), or that a client
-- which never seeds it (Redisson's RFencedLock) started again from 1,
-- starts from the server's clock in microseconds: every token drawn since
-- a counter's start is below the clock, so the new start is above every
-- token handed out before (1e15 µs is 2001).
-- A counter lives a day from its start, and again from every 256th token:
-- a lock that is no longer used leaves no key for long ("a lock per
-- order"), and the refresh costs one command in 256 draws, not one in
-- each. A counter that expires in use starts again, higher.
local function fence()
  local t = redis.call('incr', token)
  if t < 1e15 then
    t = micros()
    redis.call('set', token, t, 'PX', '86400000')
  elseif t % 256 == 0 then
    redis.call('pexpire', token, '86400000')
  end
  return t
end
-- uses fragment/fence.lua

local function unmark()
  if ARGV[6] == '1' then
    redis.call('zrem', KEYS[3], ARGV[4])
  end
end

local mode = redis.call('hget', KEYS[1], 'mode')
if not mode then
  local t = fence()
  redis.call('hset', KEYS[1], 'mode', 'write', ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  unmark()
  return once_record({1, 1, t})
end
if mode == 'write' and redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  local t = fence()
  local n = redis.call('hincrby', KEYS[1], ARGV[2], 1)
  extend(KEYS[1], ARGV[1])
  unmark()
  return once_record({1, n, t})
end
local reads = tonumber(redis.call('hget', KEYS[1], ARGV[3])) or 0
for i = 1, reads do
  if redis.call('exists', KEYS[2] .. ':' .. i) == 1 then
    unmark()
    return {-1, 0}
  end
end
local life = tonumber(ARGV[5])
if life > 0 then
  local now = millis()
  redis.call('zremrangebyscore', KEYS[3], '-inf', now)
  redis.call('zadd', KEYS[3], now + life, ARGV[4])
  redis.call('pexpire', KEYS[3], life)
end
return {0, redis.call('pttl', KEYS[1])}
