-- once_restore.lua: puts back what an owner's lane held before
-- owner_replay.lua wrote this request's record over it, pasted where a
-- release that applied nothing answers ("-- inline
-- fragment/once_restore.lua"). Reads the locals fresh and once_held.
-- Defines nothing.
if not fresh and once_ttl > 0 then
  if once_held then
    redis.call('set', once_key, once_held, 'px', once_px)
  else
    redis.call('del', once_key)
  end
end
