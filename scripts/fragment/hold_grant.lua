-- hold_grant.lua: makes the owner field the holder of the free lock, with
-- a lease of the grace only, and records the grant to the waiter who
-- (see hold.lua), pasted where a script grants ("-- inline
-- fragment/hold_grant.lua"). Reads ARGV[4] as grace_ms (see inputs.lua),
-- and the locals lock, grant, field and who. Defines nothing.
redis.call('hset', lock, field, '1')
redis.call('pexpire', lock, grace_ms)
redis.call('set', grant, who, 'PX', grace_ms)
