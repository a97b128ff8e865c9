-- inputs.lua: the inputs that every script of a queued primitive (mutex,
-- fair lock, semaphore, permit semaphore) takes first, at the same
-- positions, so that a fragment reads them wherever it is used. The
-- script's own arguments follow, from ARGV[6].
-- ARGV[1] now: ms since the epoch, the client's clock
-- ARGV[2] PUBLISH or SPUBLISH
-- ARGV[3] how long a queue entry lives unless its waiter attempts again,
--         ms (the fair lock: how long a queued latchkey waiter's heartbeat
--         lasts, its liveness timeout)
-- ARGV[4] grace in ms: how long a grant waits for its waiter to take it
-- ARGV[5] "1" if PUBLISH (or SPUBLISH) counts every receiver of a Hub's
--         channel (a single server, or sharded pub/sub), "0" if not (a
--         cluster's PUBLISH counts only the node's own)
-- Defines now_ms, pub, life_ms (ARGV[3]), grace_ms and counted (a
-- boolean): the times as strings, the same as redis.call takes them (a
-- number passed to it is formatted with sprintf, a string sent as it is),
-- since tonumber costs the server more than a command's dispatch. A
-- fragment that computes with them uses numbers.lua.
local now_ms, pub, life_ms, grace_ms = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local counted = ARGV[5] == '1'
