-- hold.lua: a Redisson lock hash {owner = hold count} as latchkey's
-- releases hand it on: who holds it, and a hold granted to a waiter.
-- Reads ARGV[4] (see inputs.lua), and the locals lock (the hash) and
-- grant (the key naming the waiter the lock was granted to, until it
-- takes the grant), which the fragment that names the primitive's KEYS
-- defines before it.
-- Defines foreign_holder() and grant_hold(field, who).
-- uses fragment/inputs.lua

-- foreign_holder reports whether the lock's holder (its first field) is
-- not a latchkey owner, whose ids are a version 8 UUID, then ':': its
-- release will grant nothing, and only Redisson's channel will say that
-- the lock is free.
local function foreign_holder()
  local holder, foreign = redis.call('hkeys', lock)[1] or ''
  -- inline fragment/holder_kind.lua
  return foreign
end

-- grant_hold makes the owner field the holder of the free lock, with a
-- lease of the grace only, and records the grant to the waiter who until
-- it takes it (its next attempt extends the lease to its own).
local function grant_hold(field, who)
  -- inline fragment/hold_grant.lua
end
