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
-- Defines once_key, once_px (the record's lifetime as sent, a string: for
-- redis.call, which would format a number) and once_ttl; a request to
-- resolve is answered here, with the record as it is stored, and the
-- script does not run. record.lua reads and writes the record: a fast
-- path that writes it itself comes before it, and defines no function.
local once_key = table.remove(KEYS)
local once_px = table.remove(ARGV)
local once_ttl = tonumber(once_px)
local done_with = tonumber(table.remove(ARGV))
if done_with > 0 then
  local old = {}
  for i = 1, done_with do
    old[i] = table.remove(KEYS)
  end
  redis.call('del', unpack(old))
end

-- A request to resolve answers with the record of the request, as it is
-- stored (its caller decodes it), if it applied; otherwise it records the
-- request as cancelled, so that a copy of it still on its way does
-- nothing, and answers CANCELLED.
if once_ttl < 0 then
  local rec = redis.call('get', once_key)
  if rec then
    return rec
  end
  redis.call('set', once_key, 'x', 'px', string.sub(once_px, 2))
  return redis.status_reply('CANCELLED')
end
