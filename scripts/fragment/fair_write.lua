-- fair_write.lua: writes what a fair lock script decided (see
-- fair_decide.lua): the queue, the deadlines and heartbeats, the lock,
-- the grant, and the letters and wake-ups.
-- Reads what fair_state.lua and fair_decide.lua define, and ARGV[1],
-- ARGV[2] and ARGV[4] (see inputs.lua).
-- Defines fence() (see fence.lua), commit(reply, write) and delete().
-- uses fragment/record.lua
-- uses fragment/letter.lua
-- uses fragment/ttl.lua
-- uses fragment/clock.lua
-- uses fragment/fence.lua
-- uses fragment/numbers.lua

-- sync makes the zset key hold the scores in is, given those it held.
local function sync(key, is, was)
  local add, rem = {}, {}
  for w, s in pairs(is) do
    if was[w] ~= s then
      add[#add + 1], add[#add + 2] = s, w
    end
  end
  for w in pairs(was) do
    if not is[w] then
      rem[#rem + 1] = w
    end
  end
  for i = 1, #add, 1000 do
    redis.call('zadd', key, unpack(add, i, math.min(i + 999, #add)))
  end
  for i = 1, #rem, 1000 do
    redis.call('zrem', key, unpack(rem, i, math.min(i + 999, #rem)))
  end
end

-- members returns the heartbeat zset's members, <hub id>/<key>, for the
-- waiters' scores.
local function members(scores)
  local m = {}
  for w, beat in pairs(scores) do
    m[(hub[w] or '') .. '/' .. (key[w] or w)] = beat
  end
  return m
end

-- commit writes the queue, the deadlines and the heartbeats; then the
-- lock, with write, a function, unless that is nil; then the grant and the
-- letters. It returns reply, recorded against the request (see once.lua)
-- if the lock was written.
-- A grant draws its fencing token first, before anything is written (an
-- error there leaves nothing half done), and whether or not its letter
-- reaches the waiter: the grantee that takes the grant at its next
-- attempt is answered with the counter, which must then be its own.
local function commit(reply, write)
  local drawn = grantee and fence()
  for _, w in ipairs(removed) do
    redis.call('lrem', queue, '1', w)
  end
  if appended then
    redis.call('rpush', queue, owner)
  end
  sync(zset, deadline, was.deadline)
  sync(hbs, members(heartbeat), wasMembers)
  if heartbeat[owner] then
    -- A heartbeat matters until it passes or its waiter's deadline does (a
    -- stale first waiter leaves by Redisson's rule): outlive both, so that a
    -- forgotten key goes, but a dead waiter is never taken for a Redisson one.
    local keep = lt
    for w in pairs(heartbeat) do
      if deadline[w] and deadline[w] - now > keep then
        keep = deadline[w] - now
      end
    end
    extend(hbs, keep)
  end
  if write then
    write()
  end
  if grantee then
    grant_hold(grantee, grantee)
  end
  for _, w in ipairs(wakes) do
    local who, body = w[1], w[2]
    if body == 'grant' then
      body = string.format('%.0f %.0f', drawn, micros())
    end
    if hub[who] and hub[who] ~= '' then
      letter(hub[who], key[who], body or 'wake')
    else
      redis.call(pub, channel .. ':' .. who, '0')
    end
  end
  if write then
    return once_record(reply)
  end
  return reply
end

-- delete deletes the lock and any grant of it not taken.
local function delete()
  redis.call('del', lock)
  redis.call('del', grant)
end
