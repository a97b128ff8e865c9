-- mutex_release.lua: release one hold of the mutex; the last one frees
-- the lock and grants it to the first waiter in line (see mutex.lua).
-- KEYS[1..7] the mutex's (see mutex_keys.lua): lock hash, fencing counter,
--         queue, deadlines, Redisson's channel, Hub channel prefix, grant
-- ARGV[1..5] now, PUBLISH or SPUBLISH, queue entry life, grace, counted
--         (see inputs.lua)
-- ARGV[6] owner id <uuid>:<n>
-- ARGV[7] lease in ms, restored when holds remain
-- ARGV[8] "1" if the owner may re-enter, "0" for an id fresh for one
--         acquisition
-- ARGV[9] "1" to yield to Redisson's waiters (see mutex.lua)
-- Returns -1 if the owner holds nothing, 0 if holds remain, 1 if released.
-- A release is recorded against its request (see once.lua), so a resend
-- answers as the first run did.
-- uses fragment/record.lua
-- uses fragment/mutex_keys.lua
-- uses fragment/inputs.lua
local owner, lease = ARGV[6], ARGV[7]
if ARGV[8] ~= '0' then
  local done = once_replay()
  if done then
    return done
  end
end
-- uses fragment/mutex_drop.lua
local dropped = drop_hold()
if dropped then
  return dropped
end
-- uses fragment/mutex.lua
free(ARGV[9])
return once_record(1)
