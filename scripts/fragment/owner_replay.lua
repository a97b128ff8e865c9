-- owner_replay.lua: a release's answer to a resend, first thing, for an
-- owner that may re-enter: its request record's reply (see once.lua). A
-- fresh id holds once, so a resend of its release whose first copy
-- applied finds nothing to release, and the script reads the record then.
-- Reads the local fresh (the owner id is fresh for one acquisition),
-- which the script defines before it. Defines nothing; answers a resend.
-- uses fragment/once.lua
if not fresh and once_ttl > 0 then
  -- inline fragment/once_read.lua
  if once_rec == 'x' then
    return redis.status_reply('CANCELLED')
  elseif once_rec then
    return tonumber(string.sub(once_rec, 2))
  end
end
