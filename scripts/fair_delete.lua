-- fair_delete.lua: delete every key of a fair lock that nobody holds:
-- Redisson's queue and deadlines, latchkey's heartbeats, a grant and the
-- fencing counter, as Redisson's RObject.delete. Waiters still queued, a
-- moment while the lock is free, are woken and queue anew: Redisson's on
-- their own channels, latchkey's by a letter that says to look again.
-- KEYS[1..8] the fair lock's (see fair_state.lua): lock hash, Redisson's
--         queue, Redisson's deadlines, heartbeats, Redisson's channel
--         prefix, grant, Hub channel prefix, fencing counter
-- ARGV[1..5] now, PUBLISH or SPUBLISH, liveness timeout, grace, counted
--         (see inputs.lua)
-- Returns -1 if the lock is held (nothing is deleted), 1 if a key
-- existed, else 0. A counter deleted starts again from the server's clock
-- (see fence.lua), so tokens keep increasing.
local lock, queue, zset, hbs, channel = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local grant, hubs, token = KEYS[6], KEYS[7], KEYS[8]
-- uses fragment/letter.lua
if redis.call('exists', lock) == 1 then
  return -1
end
for _, o in ipairs(redis.call('lrange', queue, '0', '-1')) do
  redis.call(pub, channel .. ':' .. o, '0')
end
for _, m in ipairs(redis.call('zrange', hbs, '0', '-1')) do
  local h, k = string.match(m, '^([^/]*)/(.*)$')
  if h then
    letter(h, k, '')
  end
end
if redis.call('del', queue, zset, hbs, grant, token) == 0 then
  return 0
end
return 1
