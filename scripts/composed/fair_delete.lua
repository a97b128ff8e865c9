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
-- inputs.lua: the inputs that every script of a queued primitive (mutex,
-- fair lock, semaphore, permit semaphore) takes first, at the same
-- positions, so that a fragment reads them wherever it is used. The
-- script's own arguments follow, from ARGV[6].
-- ARGV[1] now: ms since the epoch, the client's clock
-- ARGV[2] PUBLISH or SPUBLISH
-- ARGV[3] how long a queue entry lives unless its waiter attempts again,
--         ms (the fair lock: how long a queued latchkey waiter's heartbeat
--         lasts, its liveness timeout)
-- ARGV[4] grace in ms: how long a grant waits for its waiter to take it
-- ARGV[5] "1" if PUBLISH (or SPUBLISH) counts every receiver of a Hub's
--         channel (a single server, or sharded pub/sub), "0" if not (a
--         cluster's PUBLISH counts only the node's own)
-- Defines now, pub, life (ARGV[3]), grace and counted (a boolean).
local now, pub, life, grace = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local counted = ARGV[5] == '1'
-- letter.lua: letters to latchkey waiters, on the channel of each one's
-- client's pub/sub Hub: "@<key> <body>", key being the waiter's address.
-- Reads ARGV[2] and ARGV[5] (see inputs.lua), and the local hubs, the
-- prefix of each Hub's channel (<prefix>:<hub id>), which the fragment that
-- names the primitive's KEYS defines before it.
-- Defines letter(hub, key, body).
-- uses fragment/inputs.lua

-- letter writes body to the waiter whose letters go to key on the channel
-- of the Hub hub, and reports whether someone may read it: false when the
-- server counts receivers and no connection heard it, so that the waiter's
-- client is gone. A waiter without a Hub (hub ''), whose client polls,
-- gets no letter: it finds what a letter would say by its next look.
local function letter(hub, key, body)
  if hub == '' then
    return true
  end
  return redis.call(pub, hubs .. ':' .. hub, '@' .. key .. ' ' .. body) > 0 or not counted
end
-- uses fragment/letter.lua
if redis.call('exists', lock) == 1 then
  return -1
end
for _, o in ipairs(redis.call('lrange', queue, 0, -1)) do
  redis.call(pub, channel .. ':' .. o, '0')
end
for _, m in ipairs(redis.call('zrange', hbs, 0, -1)) do
  local h, k = string.match(m, '^([^/]*)/(.*)$')
  if h then
    letter(h, k, '')
  end
end
if redis.call('del', queue, zset, hbs, grant, token) == 0 then
  return 0
end
return 1
