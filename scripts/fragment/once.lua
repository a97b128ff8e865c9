-- once.lua: the request record, so that a request sent twice (go-redis
-- resends a command whose reply was lost) is applied once and answered the
-- same way both times.
--
-- Reads the last of KEYS and of ARGV, which the runner appends to those
-- the script declares, and takes them off again, so the script sees its
-- KEYS and ARGV as its header describes them:
-- ARGV[#ARGV] how long the record lives, in ms; "0" when repeating the
--             request is harmless: then nothing is read or written, and
--             nothing else is appended; negative to resolve a request its
--             caller gave up on (below)
-- KEYS[#KEYS] latchkey_once:{name}:<lane>, the lane the record lives on: a
--             key of the client's that its records write over, one record
--             at a time (see internal/rt/records.go)
-- ARGV[#ARGV-1] the record's stamp, a number the lane's records never
--             share
-- A record holds the stamp and the reply: "n<integer>" or
-- "a<integer>,<integer>,...", or "x" for a request cancelled before it
-- applied (a stamp is digits: what follows it starts the reply). What the
-- lane holds is this request's record only when it carries its stamp;
-- once_read.lua, pasted where a script reads the record, tells.
-- Defines once_key, once_px (the record's lifetime as sent, a string: for
-- redis.call, which would format a number), once_ttl (its sign: -1, 0 or
-- 1), once_tag (the stamp, which a record starts with), and once_held
-- and once_rec (once_read.lua's); a request to resolve is answered here, with the
-- reply as recorded, and the script does not run. record.lua reads and writes the record: a fast
-- path that writes it itself comes before it, and defines no function.
local once_n = #ARGV
local once_px, once_key, once_tag = ARGV[once_n]
ARGV[once_n] = nil
if once_px ~= '0' then
  once_key, once_tag = KEYS[#KEYS], ARGV[once_n - 1]
  KEYS[#KEYS], ARGV[once_n - 1] = nil, nil
end
-- once_ttl is the sign of once_px, read without tonumber, which costs the
-- server more than the rest of this header.
local once_ttl = once_px == '0' and 0 or string.byte(once_px) == 45 and -1 or 1
local once_rec, once_held

-- A request to resolve answers with its record's reply (its caller
-- decodes it), if it applied; otherwise it records the request as
-- cancelled, so that a copy of it still on its way does nothing, and
-- answers CANCELLED.
if once_ttl < 0 then
  -- inline fragment/once_read.lua
  if once_rec then
    return once_rec
  end
  redis.call('set', once_key, once_tag .. 'x', 'px', string.sub(once_px, 2))
  return redis.status_reply('CANCELLED')
end
