-- holder_kind.lua: sets foreign to whether holder, the lock's holder (its
-- first field), is not a latchkey owner, whose ids are a version 8 UUID,
-- then ':' (see hold.lua), pasted where a script tells ("-- inline
-- fragment/holder_kind.lua"). Reads the locals holder and foreign.
-- Defines nothing.
foreign = not (string.sub(holder, 15, 15) == '8' and string.sub(holder, 37, 37) == ':')
