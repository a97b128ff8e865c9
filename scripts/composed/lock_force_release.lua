-- lock_force_release.lua: delete a lock whoever holds it (a read-write
-- lock's ForceUnlock), or a latch (its Delete).
-- KEYS[1] lock key
-- KEYS[2] the lock's channel
-- KEYS[3] optional, a lock's only: latchkey_rwlock__forced:{name}, on which
--         the owners forced out (the hash's fields but mode, without
--         :write) are published, space-separated, before the wake-up: a
--         watch tells a force-unlock from a release by it
-- ARGV[1] PUBLISH or SPUBLISH
-- ARGV[2] the message that wakes waiters ("0" for RLock, "1" for a write lock)
-- Returns 1 if the key existed (and the message was published), 0 otherwise.
local t = redis.call('type', KEYS[1])['ok']
if t == 'none' then
  return 0
end
if KEYS[3] then
  local forced, seen = {}, {}
  if t == 'hash' then
    for _, f in ipairs(redis.call('hkeys', KEYS[1])) do
      local o = (string.gsub(f, ':write$', ''))
      if f ~= 'mode' and not seen[o] then
        seen[o] = true
        forced[#forced + 1] = o
      end
    end
  end
  redis.call(ARGV[1], KEYS[3], table.concat(forced, ' '))
end
redis.call('del', KEYS[1])
redis.call(ARGV[1], KEYS[2], ARGV[2])
return 1
