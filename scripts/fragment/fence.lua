-- fence.lua: a lock's fencing token: the mutex's (RFencedLock's counter),
-- a fair lock's or a write lock's (latchkey's own counters).
-- Reads the local token (the counter's key), which the script, or the
-- fragment that names its KEYS (mutex_keys.lua, fair_state.lua), defines
-- before it.
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
