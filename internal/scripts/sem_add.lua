-- sem_add.lua: add a (possibly negative) number of permits to a Redisson
-- RSemaphore, or set their number.
-- KEYS[1] semaphore name     string: the number of available permits
-- KEYS[2] redisson_sc:{name}
-- ARGV[1] the number to add, or to set
-- ARGV[2] PUBLISH or SPUBLISH
-- ARGV[3] "add" to add ARGV[1] (Redisson's addPermits), "set" to set it
-- Writes the new count with SET, so any TTL is dropped, as Redisson does.
-- Publishes the new count when it is positive (nobody can take fewer than
-- one permit; Redisson's listeners reject a negative count) and returns it,
-- recorded against its request.
-- uses prelude/once.lua
local done = once_replay()
if done then
  return done
end
local available = tonumber(ARGV[1])
if ARGV[3] == 'add' then
  available = available + tonumber(redis.call('get', KEYS[1]) or '0')
end
redis.call('set', KEYS[1], available)
if available > 0 then
  redis.call(ARGV[2], KEYS[2], available)
end
return once_record(available)
