-- expire_entries.lua: drops the waiter entries whose deadline passed
-- (see queue.lua), pasted where a script purges the queue
-- ("-- inline fragment/expire_entries.lua"). Reads ARGV[1] as now_ms (see
-- inputs.lua), and the locals queue and deadlines. Defines nothing.
for _, e in ipairs(redis.call('zrangebyscore', deadlines, '-inf', now_ms)) do
  redis.call('lrem', queue, '1', e)
  redis.call('zrem', deadlines, e)
end
