-- rw_write_acquire.lua: take one write hold of a Redisson RReadWriteLock.
-- KEYS[1] lock hash name (see rw_read_acquire.lua)
-- KEYS[2] {name}:<owner>:rwlock_timeout, the prefix of the owner's read
--         timeout keys
-- KEYS[3] latchkey_rwlock_writers:{name}, the writers' marker: zset of
--         waiting writers' entries -> deadline (ms, server clock)
-- KEYS[4] latchkey_rwlock_token:{name}, the write holds' fencing counter
--         (latchkey's own: Redisson's read-write lock keeps none)
-- ARGV[1] lease in ms
-- ARGV[2] the owner's write field, <owner>:write
-- ARGV[3] owner id <uuid>:<n>
-- ARGV[4] the waiting call's entry in the marker
-- ARGV[5] how long an entry lives unless its writer attempts again, ms; 0
--         for a single try, which leaves no entry
-- ARGV[6] "1" if an earlier attempt of this call may have left its entry
-- The write lock is free only when nobody holds the hash; its owner may
-- re-enter (the TTL becomes at least the lease). A writer that must wait
-- (re)writes its entry with a deadline ARGV[5] from now: while an entry
-- lives, new latchkey readers wait behind it (writer preference); a writer
-- that died costs them at most ARGV[5]. A writer that acquires, or finds
-- that it would wait for itself, removes its entry.
-- Each acquisition draws the next fencing token, a re-entry too, as the
-- mutex's does (see fence.lua); a read hold draws none: readers hold
-- together, and a token orders one holder after another.
-- Returns {1, n, token} when acquired, n being the owner's write holds
-- now and token the hold's fencing token;
-- {0, pttl} while others hold it (pttl is -1 if the key has no TTL);
-- {-1, 0} when the owner itself holds a live read lock and no write lock:
-- it would wait for itself forever (Redisson waits; latchkey refuses).
-- An acquisition is recorded against its request.
-- uses fragment/replay.lua
-- uses fragment/clock.lua
-- uses fragment/ttl.lua
local token = KEYS[4]
-- uses fragment/fence.lua

local function unmark()
  if ARGV[6] == '1' then
    redis.call('zrem', KEYS[3], ARGV[4])
  end
end

local mode = redis.call('hget', KEYS[1], 'mode')
if not mode then
  local t = fence()
  redis.call('hset', KEYS[1], 'mode', 'write', ARGV[2], '1')
  redis.call('pexpire', KEYS[1], ARGV[1])
  unmark()
  return once_record({1, 1, t})
end
if mode == 'write' and redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  local t = fence()
  local n = redis.call('hincrby', KEYS[1], ARGV[2], '1')
  extend(KEYS[1], ARGV[1])
  unmark()
  return once_record({1, n, t})
end
local reads = tonumber(redis.call('hget', KEYS[1], ARGV[3])) or 0
for i = 1, reads do
  if redis.call('exists', KEYS[2] .. ':' .. i) == 1 then
    unmark()
    return {-1, 0}
  end
end
local life = tonumber(ARGV[5])
if life > 0 then
  local now = millis()
  redis.call('zremrangebyscore', KEYS[3], '-inf', now)
  redis.call('zadd', KEYS[3], now + life, ARGV[4])
  redis.call('pexpire', KEYS[3], life)
end
return {0, redis.call('pttl', KEYS[1])}
