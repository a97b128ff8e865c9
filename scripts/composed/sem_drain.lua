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
-- sem_drain.lua: take every available permit of a Redisson RSemaphore.
-- KEYS[1] semaphore name     string: the number of available permits
-- Sets a positive count to 0 and returns it; returns 0 and changes nothing
-- when the count is zero, negative (Redisson would reset it to 0, creating
-- permits) or missing. Publishes nothing, as Redisson's drainPermits.
-- What it took is recorded against its request.
-- uses fragment/replay.lua
local available = tonumber(redis.call('get', KEYS[1]) or '0')
if available <= 0 then
  return 0
end
redis.call('set', KEYS[1], 0)
return once_record(available)
