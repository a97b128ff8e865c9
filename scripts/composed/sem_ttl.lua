-- sem_ttl.lua: how long a semaphore, or a permit semaphore, lives (TTL):
-- its count and the key that holds permits beside it (see follow.lua).
-- KEYS[1] semaphore name     string: the permits available
-- KEYS[2] the semaphore's grants (latchkey_semaphore_grant:{name}) or the
--         permit semaphore's leases ({name}:timeout)
-- Returns the ms left of the longest TTL of the two, -1 if one exists
-- without a TTL, -2 if neither exists.
local out = -2
for _, key in ipairs(KEYS) do
  local ttl = redis.call('pttl', key)
  if ttl == -1 then
    return -1
  end
  out = math.max(out, ttl)
end
return out
