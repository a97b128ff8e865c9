-- fair_state.lua: the fair lock's KEYS and the inputs every fair lock
-- script takes, checked first, and the state each reads before it decides.
-- KEYS[1] lock hash N                  {owner = hold count}, TTL = lease
-- KEYS[2] redisson_lock_queue:{N}      list of waiting owners, in arrival order
-- KEYS[3] redisson_lock_timeout:{N}    zset owner -> Redisson deadline, client
--                                      clock ms
-- KEYS[4] latchkey_lock_heartbeat:{N}  zset latchkey waiter -> heartbeat
--                                      deadline, client clock ms (latchkey's
--                                      own key: Redisson never reads it); its
--                                      members are <hub id>/<key>
-- KEYS[5] redisson_lock__channel:{N}   a waiter's own channel is KEYS[5]:<owner>
-- KEYS[6] latchkey_lock_grant:{N}      the latchkey waiter a release granted
--                                      the lock to, until it takes it
-- KEYS[7] latchkey_lock__channel:{N}   a latchkey client's channel is
--                                      KEYS[7]:<hub id>
-- KEYS[8] latchkey_lock_token:{N}      the fencing counter (latchkey's own:
--                                      Redisson's fair lock keeps none)
-- ARGV[1..5] see inputs.lua; ARGV[3] is the liveness timeout: a queued
--         latchkey waiter's heartbeat is now + this, renewed by each of
--         its attempts
-- ARGV[6] owner id <uuid>:<n> ("" for a forced unlock)
-- ARGV[7] lease in ms
-- ARGV[8] Redisson's wait timeout in ms (its fairLockWaitTimeout)
-- Bad inputs or keys of the wrong type are answered at once with an error
-- reply: the scripts validate, then decide on a copy of the queue in
-- memory (fair_decide.lua), then write (fair_write.lua), since a Lua
-- error part-way would leave the writes before it in place. (A script
-- that uses replay.lua after this fragment answers a request applied
-- before from its record, once the inputs are found good.)
-- Defines lock, queue, zset, hbs, channel, grant, hubs and token (the KEYS),
-- owner, lease, wt, lt; read(), which sets q (the queue), deadline and
-- heartbeat (waiter -> score), was (the scores read), wasMembers, hub and
-- key (latchkey waiter -> its Hub id, its letter key), pttl (-2: the lock
-- is free), holds (the owner's) and granted (the owner was granted the
-- lock and has not taken the grant yet).
-- uses fragment/numbers.lua
local lock, queue, zset, hbs, channel = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local grant, hubs, token = KEYS[6], KEYS[7], KEYS[8]
local owner, lease, wt, lt = ARGV[6], tonumber(ARGV[7]), tonumber(ARGV[8]), life

if not (now and lease and wt and lt and lease > 0 and wt > 0 and lt > 0) then
  return redis.error_reply('fairlock: now, lease and timeouts must be numbers, all but now positive')
end
for _, k in ipairs({{lock, 'hash'}, {queue, 'list'}, {zset, 'zset'}, {hbs, 'zset'}, {token, 'string'}}) do
  local t = redis.call('type', k[1])['ok']
  if t ~= 'none' and t ~= k[2] then
    return redis.error_reply('WRONGTYPE fairlock: ' .. k[1] .. ' holds a ' .. t)
  end
end

local q, deadline, heartbeat, was, wasMembers, hub, key, pttl, holds, granted

local function read()
  q = redis.call('lrange', queue, '0', '-1')
  local zs = redis.call('zrange', zset, '0', '-1', 'withscores')
  local hs = redis.call('zrange', hbs, '0', '-1', 'withscores')
  deadline, heartbeat, was = {}, {}, {deadline = {}, heartbeat = {}}
  hub, key, wasMembers = {}, {}, {}
  for i = 1, #zs, 2 do
    deadline[zs[i]] = tonumber(zs[i + 1])
    was.deadline[zs[i]] = deadline[zs[i]]
  end
  for i = 1, #hs, 2 do
    local h, k = string.match(hs[i], '^([^/]*)/(.*)$')
    local who = k and string.match(k, '^[^/]*') or hs[i]
    heartbeat[who], hub[who], key[who] = tonumber(hs[i + 1]), h, k
    was.heartbeat[who] = heartbeat[who]
    wasMembers[hs[i]] = heartbeat[who]
  end
  pttl = redis.call('pttl', lock)
  holds = tonumber(redis.call('hget', lock, owner)) or 0
  granted = holds > 0 and redis.call('get', grant) == owner
end
