-- enqueue.lua: puts entry e at the tail of the queue unless it is queued,
-- with a deadline of now + life, and sets rank to its place, 0 at the
-- head (see queue.lua), pasted where a waiter joins
-- ("-- inline fragment/enqueue.lua"). Reads ARGV[1] and ARGV[3] as now_ms
-- and life_ms (see inputs.lua), and the locals queue, deadlines, e and rank.
-- Defines nothing.
if redis.call('zadd', deadlines, now_ms + life_ms, e) == 1 then
  rank = redis.call('rpush', queue, e) - 1
else
  rank = redis.call('lpos', queue, e)
end
