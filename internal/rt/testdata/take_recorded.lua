-- take_recorded.lua (tests only): take permits from a counter, recorded against its request.
-- KEYS[1] semaphore name     string: the number of available permits
-- ARGV[1] permits to take (> 0)
-- Returns {1, available after} when taken, {0, -1} when fewer are available
-- (-1: no bound, only a release says when to try again). A missing key
-- counts as 0 permits. An acquisition is recorded against its request.
-- uses fragment/replay.lua
local n = tonumber(ARGV[1])
local available = tonumber(redis.call('get', KEYS[1]) or '0')
if available < n then
  return {0, -1}
end
return once_record({1, redis.call('decrby', KEYS[1], n)})
