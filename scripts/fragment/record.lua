-- record.lua: the request record's replay and writing (see once.lua).
-- Reads once.lua's locals. Defines once_replay() and once_record(reply).
-- uses fragment/once.lua

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

-- once_replay returns the reply recorded by an earlier run of this request,
-- or nil when there is none.
local function once_replay()
  if once_ttl == 0 then
    return nil
  end
  -- inline fragment/once_read.lua
  if not once_rec then
    return nil
  end
  return once_decode(once_rec)
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
      rec = once_tag .. 'a' .. table.concat(parts, ',')
    else
      rec = once_tag .. 'n' .. string.format('%d', reply)
    end
    redis.call('set', once_key, rec, 'px', once_px)
  end
  return reply
end
