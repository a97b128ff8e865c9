-- latch_count_down.lua: count a Redisson RCountDownLatch down by one.
-- KEYS[1] latch key                      string, the count
-- KEYS[2] redisson_countdownlatch__channel__{name}, only when ARGV[1] is set
-- ARGV[1] PUBLISH or SPUBLISH, or "" when the caller publishes itself (a
--         cluster name whose channel hashes to another slot than the key)
-- Returns the count left: > 0 while the latch stays closed; 0 when this call
-- opened it (the key is deleted and "0", ZERO_COUNT, published); -1 when
-- there was no latch (nothing is written: the count never goes below zero
-- and no key is left behind).
-- A count-down is recorded against its request.
-- uses fragment/replay.lua
if redis.call('exists', KEYS[1]) == 0 then
  return -1
end
local left = redis.call('decr', KEYS[1])
if left > 0 then
  return once_record(left)
end
redis.call('del', KEYS[1])
if ARGV[1] ~= '' then
  redis.call(ARGV[1], KEYS[2], '0')
end
return once_record(0)
