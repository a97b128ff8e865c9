-- mutex_keys.lua: the KEYS of every mutex script, and the shape of the
-- entries of its waiter queue.
-- KEYS[1] lock hash name                  {owner = hold count}
-- KEYS[2] redisson_lock_token:{name}      fencing counter (RFencedLock layout)
-- KEYS[3] latchkey_lock_queue:{name}      list of waiter entries, oldest first
-- KEYS[4] latchkey_lock_timeout:{name}    zset: waiter entry -> deadline (ms)
-- KEYS[5] redisson_lock__channel:{name}   the shared unlock channel
-- KEYS[6] latchkey_lock__channel:{name}   prefix of each Hub's channel,
--                                         <prefix>:<hub id>
-- KEYS[7] latchkey_lock_grant:{name}      the entry the lock was granted
--                                         to, until it takes the grant
-- A waiter entry is <hub id>/<key>, where key, the letter's address, is
-- the owner id, followed by /<call id> for an owner that may re-enter (one
-- owner may wait in two calls).
-- Defines lock, token, queue, deadlines, shared, hubs and grant (the
-- KEYS), and no function: mutex_entry.lua reads the queue's entries.
local lock, token, queue, deadlines = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local shared, hubs, grant = KEYS[5], KEYS[6], KEYS[7]
