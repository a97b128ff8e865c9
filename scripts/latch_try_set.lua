-- latch_try_set.lua: set the count of a Redisson RCountDownLatch that does
-- not exist (its count is 0), as trySetCount does.
-- KEYS[1] latch key                      string, the count
-- KEYS[2] redisson_countdownlatch__channel__{name}, only when ARGV[2] is set
-- ARGV[1] the new count, a positive decimal
-- ARGV[2] PUBLISH or SPUBLISH, or "" when the caller publishes itself (a
--         cluster name whose channel hashes to another slot than the key)
-- Returns 1 if the count was set (and "1", NEW_COUNT, was published), 0 if
-- the latch already exists (nothing changed).
-- Setting is recorded against its request: a resend still answers 1.
-- uses fragment/replay.lua
if redis.call('exists', KEYS[1]) == 1 then
  return 0
end
redis.call('set', KEYS[1], ARGV[1])
if ARGV[2] ~= '' then
  redis.call(ARGV[2], KEYS[2], '1')
end
return once_record(1)
