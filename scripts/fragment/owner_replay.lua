-- owner_replay.lua: a release's answer to a resend, first thing, for an
-- owner that may re-enter: its request record's reply (see once.lua). A
-- fresh id holds once, so a resend of its release whose first copy
-- applied finds nothing to release, and the script reads the record then.
-- The owner's record is read and written in one command (SET ... GET):
-- it is written as once_guess, the reply the script expects, so that a
-- run that answers otherwise writes it again, and one that applies
-- nothing puts back what the lane held (once_restore.lua); a resend puts
-- its record back at once. That is one command fewer than a GET, then a
-- SET, on the release's usual run.
-- Reads the locals fresh (the owner id is fresh for one acquisition) and
-- once_guess ("n1", say), which the script defines before it. Defines
-- nothing; sets once_held, what the lane held, and answers a resend.
-- uses fragment/once.lua
if not fresh and once_ttl > 0 then
  once_held = redis.call('set', once_key, once_tag .. once_guess, 'px', once_px, 'get')
  -- inline fragment/once_match.lua
  if once_rec then
    redis.call('set', once_key, once_held, 'px', once_px)
  end
  if once_rec == 'x' then
    return redis.status_reply('CANCELLED')
  elseif once_rec then
    return tonumber(string.sub(once_rec, 2))
  end
end
