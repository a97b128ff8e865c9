-- once_match.lua: tells whether once_held, what the request's lane held
-- (see once.lua), is this request's record, pasted where a script has read
-- the lane ("-- inline fragment/once_match.lua"): a record is this
-- request's only when it starts with the request's stamp, which digits
-- end. Sets once_rec, which once.lua declares, to the reply recorded
-- ("n1", "a1,2,3", "x"), or nil. Defines nothing.
once_rec = string.match(once_held or '', '^' .. once_tag .. '([nax].*)')
