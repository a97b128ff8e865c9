-- once_read.lua: reads this request's record off its lane (see once.lua),
-- pasted where a script reads it ("-- inline fragment/once_read.lua").
-- Sets once_held to what the lane holds, and once_rec, which once.lua
-- declares, to the reply recorded ("n1", "a1,2,3", "x"), or nil when the
-- lane holds none of this request's. Defines nothing.
once_held = redis.call('get', once_key)
-- inline fragment/once_match.lua
