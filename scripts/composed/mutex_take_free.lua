-- once.lua: the request record, so that a request sent twice (go-redis
-- resends a command whose reply was lost) is applied once and answered the
-- same way both times.
--
-- Reads the last of KEYS and of ARGV, which the runner appends to those
-- the script declares, and takes them off again, so the script sees its
-- KEYS and ARGV as its header describes them:
-- KEYS[#KEYS] latchkey_once:{name}:<request id>, the record of this request
-- ARGV[#ARGV] how long the record lives, in ms; 0 when repeating the
--             request is harmless, and then nothing is read or written;
--             negative to resolve a request its caller gave up on (below)
-- A record holds the reply: "n<integer>" or "a<integer>,<integer>,...", or
-- "x" for a request cancelled before it applied.
-- Defines once_replay() and once_record(reply); a request to resolve is
-- answered here, and the script does not run.
local once_key = table.remove(KEYS)
local once_ttl = tonumber(table.remove(ARGV))

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
-- mutex_take_free.lua: the first try of a plain Lock or TryLock: take the
-- mutex if it is free, with only the keys and arguments that takes (see
-- mutex_acquire.lua, whose fast path it is). It never queues.
-- KEYS[1] lock hash, KEYS[2] fencing counter, KEYS[3] grant (see
--         mutex_keys.lua)
-- ARGV[1] owner id <uuid>:<n>, fresh for this one acquisition
-- ARGV[2] lease in ms
-- Returns {1, token, 1} when acquired, or found acquired by an earlier
-- send of this request (the TTL is reset to the lease); {0, pttl} when
-- the lock is held, or a turn at it was given (pttl is how long that
-- lasts, -1 if the key has no TTL).
-- uses fragment/once.lua
local lock, token, grant = KEYS[1], KEYS[2], KEYS[3]
local owner, lease = ARGV[1], ARGV[2]
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
-- fence.lua: the mutex's fencing token (RFencedLock's counter).
-- Reads the local token (the counter's key), which the script, or
-- mutex_keys.lua, defines before it.
-- Defines fence().
-- uses fragment/clock.lua

-- fence returns the next fencing token. A counter that is missing (new,
-- or lost to a restart without persistence) starts from the server's clock
-- in microseconds, above any token it can have handed out before.
local function fence()
  local t = redis.call('incr', token)
  if t == 1 then
    t = micros()
    redis.call('set', token, t)
  end
  return t
end
-- mutex_take.lua: the mutex's fast path: a free lock that no turn was
-- given on is taken without a look at the queue (see mutex.lua), before
-- the queue's code is defined.
-- Reads the locals lock, token and grant (the lock hash, the fencing
-- counter and the grant key: see mutex_keys.lua) and owner and lease,
-- which the script defines before it.
-- Defines take_free().
-- uses fragment/fence.lua

-- take_free takes the lock for owner if it is free and no turn at it was
-- given, and returns the reply {1, token, holds}; else it returns nil and
-- whether the lock is held.
local function take_free()
  if redis.call('exists', lock) == 1 then
    return nil, true
  end
  if redis.call('exists', grant) == 1 then
    return nil, false
  end
  local n = redis.call('hincrby', lock, owner, 1)
  redis.call('pexpire', lock, lease)
  return once_record({1, fence(), n})
end
-- uses fragment/mutex_take.lua
local taken, held = take_free()
if taken then
  return taken
end
if not held then
  return {0, redis.call('pttl', grant)} -- a turn given to a waiter
end
local n = redis.call('hget', lock, owner)
if n then
  redis.call('pexpire', lock, lease)
  return {1, tonumber(redis.call('get', token) or '0'), tonumber(n)}
end
return {0, redis.call('pttl', lock)}
