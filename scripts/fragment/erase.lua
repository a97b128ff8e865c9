-- erase.lua: deletes a semaphore or a permit semaphore (Delete), Redisson's
-- keys and latchkey's beside them, and wakes whoever waits for it.
--
-- Every latchkey waiter in the queue, and every one granted permits that
-- it has not come for (granted()), gets the letter "deleted": its Acquire
-- fails, rather than wait on for permits that nobody may ever set again.
-- Redisson's own delete publishes nothing, and leaves its waiters asleep;
-- here they hear a count that wakes them all (Redisson's listeners wake as
-- many of their waiters as the count says, and latchkey's head waiter
-- attempts at it), find no permits, and wait on as for a semaphore that
-- was never set.
-- Reads ARGV[2] (see inputs.lua), the local shared (Redisson's channel),
-- queue, and granted(), which the primitive's fragment defines before it,
-- and tell(e, body) (see queue.lua).
-- Defines erase(state, notes).

-- erase tells the waiters, deletes the keys state (the count, the keys
-- that hold permits, the queue) and notes (the listeners and the turn,
-- whose lives are their own), and returns 1 if a key of state existed,
-- else 0.
local function erase(state, notes)
  for _, list in ipairs({redis.call('lrange', queue, '0', '-1'), granted()}) do
    for _, e in ipairs(list) do
      tell(e, 'deleted')
    end
  end
  local existed = redis.call('del', unpack(state)) > 0
  redis.call('del', unpack(notes))
  if not existed then
    return 0
  end
  redis.call(pub, shared, '2147483647')
  return 1
end
