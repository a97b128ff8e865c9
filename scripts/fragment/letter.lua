-- letter.lua: letters to latchkey waiters, on the channel of each one's
-- client's pub/sub Hub: "@<key> <body>", key being the waiter's address.
-- Reads ARGV[2] and ARGV[5] (see inputs.lua), and the local hubs, the
-- prefix of each Hub's channel (<prefix>:<hub id>), which the fragment that
-- names the primitive's KEYS defines before it.
-- Defines letter(hub, key, body).
-- uses fragment/inputs.lua

-- letter writes body to the waiter whose letters go to key on the channel
-- of the Hub hub, and reports whether someone may read it: false when the
-- server counts receivers and no connection heard it, so that the waiter's
-- client is gone. A waiter without a Hub (hub ''), whose client polls,
-- gets no letter: it finds what a letter would say by its next look.
local function letter(hub, key, body)
  local sent
  -- inline fragment/post.lua
  return sent
end
