-- subscribers.lua: the clients subscribed to a channel itself.
--
-- PUBLISH answers how many clients received a message, counting those
-- whose pattern matched the channel (a latchkey watch listens by pattern),
-- who wait for nothing. A release that decides by who heard it whether
-- Redisson's waiters listen asks the server who subscribed to the
-- channel itself, as Redisson's waiters do: PUBSUB NUMSUB, or SHARDNUMSUB
-- where the scripts publish with SPUBLISH.
-- Reads ARGV[2] (see inputs.lua).
-- Defines subscribers(channel).
-- uses fragment/inputs.lua

local function subscribers(channel)
  local numsub = pub == 'SPUBLISH' and 'shardnumsub' or 'numsub'
  return tonumber(redis.call('pubsub', numsub, channel)[2])
end
