-- mutex_release.lua: release one hold of the mutex; the last one frees
-- the lock and grants it to the first waiter in line (see mutex.lua).
-- KEYS[1..7] the mutex's (see mutex_keys.lua): lock hash, fencing counter,
--         queue, deadlines, Redisson's channel, Hub channel prefix, grant
-- ARGV[1..5] now, PUBLISH or SPUBLISH, queue entry life, grace, counted
--         (see inputs.lua)
-- ARGV[6] owner id <uuid>:<n>
-- ARGV[7] lease in ms, restored when holds remain
-- ARGV[8] two flags, one character each (see flags.go): "1" if the
--         owner may re-enter, "0" for an id fresh for one acquisition;
--         then "1" to yield to Redisson's waiters (see mutex.lua)
-- Returns -1 if the owner holds nothing, 0 if holds remain, 1 if released,
-- 2 if released while waiters queued (the lock handed on to them).
-- A release is recorded against its request (see once.lua), as
-- "n<reply>", so a resend answers as the first run did.
-- It defines no function unless the hand-on goes an uncommon way (a
-- Redisson client may have heard the release, a waiter's client is gone,
-- the fencing counter starts or is renewed); mutex_release_alone.lua, its
-- fast path for a hold that found the lock free, has none at all.
-- uses fragment/once.lua
-- uses fragment/mutex_keys.lua
local owner, lease = ARGV[6], ARGV[7]
local fresh, yield, once_guess = string.byte(ARGV[8], 1) == 48, string.sub(ARGV[8], 2, 2), 'n2'
-- uses fragment/owner_replay.lua
local reply = 1
local n = redis.call('hincrby', lock, owner, '-1')
if n > 0 then
  redis.call('pexpire', lock, lease)
  reply = 0
elseif n < 0 then
  -- Not an owner: take back the field the decrement made. The hash, and
  -- the TTL of a hash another owner holds, are as they were.
  redis.call('hdel', lock, owner)
  if fresh and once_ttl > 0 then
    -- inline fragment/once_read.lua
  end
  if once_rec == 'n1' or once_rec == 'n2' then
    return tonumber(string.sub(once_rec, 2))
  end
  -- inline fragment/once_restore.lua
  return -1
else
  -- The last hold: free the lock, and any grant of it not taken, and
  -- tell Redisson's waiters, as Redisson does.
  redis.call('del', lock, grant)
  local heard_by = redis.call(ARGV[2], shared, '0')
  -- The common hand-on, with no function defined either: nobody else
  -- may have heard the message (or the release does not yield), and the
  -- head of the queue, its expired entries dropped, is a latchkey waiter
  -- whose Hub hears the letter of its grant, as the next one's hears that
  -- it is next; or nobody queues. Otherwise the rest is mutex.lua's, from
  -- where this left off: hand_on, with the head taken and the token
  -- drawn, or the next one's letter.
  -- uses fragment/inputs.lua
  local granted, told, drawn, head = false, true
  if heard_by == 0 or yield ~= '1' then
    -- inline fragment/expire_entries.lua
    head = redis.call('lpop', queue)
    granted = not head
    if head then
      reply = 2
    end
    if head and head ~= 'redisson' then
      drawn = redis.call('incr', token)
      if drawn >= 1e15 and drawn % 256 ~= 0 then
        local hub, key, field = string.match(head, '^([^/]*)/(([^/]*).*)$')
        local us, sent
        -- inline fragment/clock_digits.lua
        local body = string.format('%.0f ', drawn) .. us
        -- inline fragment/post.lua
        if sent then
          redis.call('zrem', deadlines, head)
          local who = head
          -- inline fragment/hold_grant.lua
          granted, drawn, head = true, nil, nil
          local second = redis.call('lindex', queue, '0')
          if second and second ~= 'redisson' and second ~= 'redisson:turn' then
            hub, key = string.match(second, '^([^/]*)/(.*)$')
            body = 'next'
            -- inline fragment/post.lua
            told = sent
          end
        end
      end
    end
  end
  if not (granted and told) then
    -- uses fragment/mutex.lua
    if granted then
      known = true
      tell_next(8)
    else
      hand_on(yield, heard_by, drawn, head)
      if waiting() then
        reply = 2
      end
    end
  end
end
if once_ttl > 0 and (fresh or reply ~= 2) then
  local rec = reply == 0 and 'n0' or reply == 1 and 'n1' or 'n2'
  redis.call('set', once_key, once_tag .. rec, 'px', once_px)
end
return reply
