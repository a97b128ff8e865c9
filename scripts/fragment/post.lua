-- post.lua: writes the letter body to the waiter at key on the channel of
-- the Hub hub (see letter.lua), pasted where a script writes one
-- ("-- inline fragment/post.lua"), and sets sent to whether someone may
-- read it. Reads ARGV[2] and ARGV[5] as pub and counted (see inputs.lua),
-- and the locals hubs, hub, key, body and sent. Defines nothing.
sent = hub == '' or redis.call(pub, hubs .. ':' .. hub, '@' .. key .. ' ' .. body) > 0 or not counted
