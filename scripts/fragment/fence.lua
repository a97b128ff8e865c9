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
