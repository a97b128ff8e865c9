// Command latchkey inspects the distributed synchronizers that latchkey and
// Redisson keep in Redis: who holds a lock, for how long, who waits, how
// many permits are left, what a latch's count is.
//
// Usage:
//
//	latchkey [connection flags] COMMAND [flags] ARGS
//
// The commands:
//
//	inspect [-json] [-kind K] NAME...        show what is held and who waits
//	ls [-json] [-all] [PATTERN]              list the synchronizers present (one SCAN pass)
//	watch [-json] [-kind K] [-every D] NAME  follow a synchronizer as it changes
//	deadlocks [-json] [PATTERN]              processes that wait for each other
//	unlock [-yes] [-kind K] NAME             force-unlock a lock, waking its waiters
//	evict [-yes] [-kind K] NAME WAITER       remove a waiter from a queue, waking those it held back
//	release [-yes] [-n N | -id ID] NAME      give permits back, serving waiters (alias give)
//	countdown [-yes] [-n N] NAME             count a latch down, releasing its waiters at zero
//	clear [-yes] [-kind K] NAME              delete a free lock's leftovers: dead waiters' queues
//	lua [NAME]                               list the Lua scripts as sent, or print one
//	version                                  print the version of latchkey
//
// The connection flags (also accepted after the command) are -redis ADDR
// (host:port, a comma-separated list of seeds with -cluster or of sentinels
// with -sentinel-master, or a redis:// or rediss:// URL; the default is
// $REDIS_URL, else 127.0.0.1:6379), -cluster, -sentinel-master NAME (connect
// through Redis Sentinel to the master called NAME), -user, -password and
// -timeout. Without -password or a password in the URL, the password is
// taken from $REDISCLI_AUTH, as redis-cli does, which keeps it out of ps.
// -timeout (10s) bounds each command's reads and its change, each round
// trip of ls (a SCAN call, a batch of keys sifted or read) and each look of
// watch.
//
// ls reads each master's keyspace once (SCAN, matching PATTERN on its
// side, a Redis glob) and sifts each page of keys in a round trip or two,
// reading a few bytes of each (a hash's sampled field names, a string's
// first 21 bytes): a name that may be a synchronizer's, and a waiter queue
// left behind, is read in a batch with others, and its row printed as soon
// as its batch is read. A round trip past -timeout, or a master that fails,
// ends that master's listing: the rows found are printed, stderr says what
// is missing, and the exit status is 7.
//
// latchkey COMMAND -h says what the command takes, what it changes, and
// gives an example. The commands that change a synchronizer (unlock,
// evict, release, countdown, clear) show what they will do and ask for
// confirmation on a terminal; -yes skips the question, and is required
// when stdin is not a terminal. unlock names each holder by the host and
// pid of its process record, and says when it learns that it was forced
// out: a latchkey holder keeps running, and is told within about a second
// (its Done closes; at its next renewal if its client polls); a Java
// client is never told (its watchdog stops at its next renewal). Each wakes whoever its change frees, latchkey's and Redisson's
// waiters alike, on the channels they listen on, through the library.
//
// evict takes a waiter out of a queue (a mutex's, a fair lock's, a
// semaphore's or a permit semaphore's, or a read-write lock's waiting
// writers) as if it had given up: for a waiter that died queued, which
// would otherwise hold up those behind it until its deadline (a fair
// lock's Redisson waiter: Redisson's fairLockWaitTimeout, 5 minutes by
// default; pass -wait-timeout if the Java clients set another, for the
// deadlines behind it move up by it). release (or give) gives back the
// permits of holders that died: -n N to a semaphore, -id ID one permit of
// a permit semaphore. countdown counts a latch down. A semaphore and a
// latch are both a plain integer, as is a permit semaphore none of whose
// permits is held: what lies beside it tells which (see Kinds below);
// where nothing does, release and countdown want -kind semaphore or -kind
// countdownlatch. clear deletes every key of a lock
// nobody holds: what waiters that died left queued (those keys have no
// TTL), and the fencing counter; live waiters are told to queue again.
//
// watch looks at NAME's state every -every (messages or not), on each
// message on the channels its releases publish on, and when the holder's
// TTL runs out or its renewal is overdue, and prints a line for each
// change. It also prints a line for every release it hears that no change
// it saw accounts for: a hold it did not see (a Java client's hold of 0.3s
// between two looks), saying on which channel and what the message means
// (an unlock, a fair-lock handoff, a read- or write-unlock, a semaphore
// release, a latch reaching zero). A fair lock's releases go to its
// waiters' own channels, Redisson's waiters' redisson_lock__channel:{NAME}:
// <owner> and latchkey's Hubs' latchkey_lock__channel:{NAME}:<hub id>
// (a grant, with the new holder's token): watch follows them all by a
// pattern where patterns work (one server, or a cluster without sharded
// pub/sub: PSUBSCRIBE, which neither PUBSUB NUMSUB nor the fair lock's
// releases count), and with sharded pub/sub the channels of the waiters
// queued at its latest look. A holder gone with nothing heard whose TTL
// has run out since the last look expired (said so for a mutex, and for
// any lock whose waiters a release would have told; "released (or
// expired)" otherwise). What a look shows that watch did not hear it says
// ("may have missed holds"): a holder replaced with no release heard, or
// a fencing counter (a mutex's, a fair lock's: each latchkey acquisition,
// re-entries included, draws one) that moved further than the
// acquisitions it saw or heard of. A fair lock's release with nobody
// queued publishes nothing, so a Java client's hold taken and released
// between two looks, uncontended, stays unseen.
//
// latchkey's force-unlocks (unlock, and the library's ForceUnlock) tell
// who they forced out on a channel of their own, latchkey_lock__forced:
// {NAME} or latchkey_rwlock__forced:{NAME}, and watch prints them as
// such; a Java client's forceUnlock publishes what its unlock does, and
// shows as a release. A held lock whose TTL has run down without a
// renewal for longer than a watchdog allows (a third of the lease, plus a
// sixth of it or at least 1s) is said once per hold, measured from the
// lease, -lease (30s), or where its TTL was seen over that, the largest
// TTL seen, which makes the time a lower bound ("at least"): its holder
// stopped renewing it, or took it with a fixed lease, and it ends when it
// expires.
//
// With -json, watch prints one JSON object per line for each change:
// {"time": RFC 3339 time, "event", "state": the object inspect -json
// prints, and for some events more fields}. The events:
//
//	now             the first look
//	acquired, released, handoff, changed
//	                what the look saw change
//	expired         a hold that ran out, nothing releasing it (and who
//	                holds now, if anyone)
//	forced          a latchkey force-unlock: "owners" (those forced out),
//	                "channel", "message"
//	unseen_release  a release that no change seen accounts for: "channel",
//	                "message" (its payload), "what" (what it means)
//	missed          what the look shows that was not heard: "what"
//	not_renewed     a hold not renewed: "not_renewed_ms" (for how long),
//	                "expires_in_ms" (its TTL), "lease_ms" (measured
//	                against), "at_least" (a lower bound)
//	dropped         "dropped" messages, more than watch keeps between two
//	                looks (10000), were not shown
//
// inspect -json and ls -json print one object per synchronizer:
//
//	name, kind      the name; mutex, fairlock, rwlock, semaphore,
//	                permitsemaphore, countdownlatch,
//	                "semaphore|countdownlatch" (a plain integer: -kind
//	                says which), "mutex|fairlock" (a Redisson lock hash
//	                alone), "none" (nothing here) or "other"
//	ttl_ms          the main key's time to live: -1 none, 0 no such key
//	mode            rwlock: "read" or "write" (omitted otherwise)
//	holders         [{owner, count, mode, client, ttl_ms, token,
//	                renewed_ms, running_down, process}]: client is
//	                "latchkey" or "redisson" (by the owner id's shape);
//	                mode for rwlock; ttl_ms the hold's (a reader's
//	                longest read hold's); token the holder's fencing
//	                token, a latchkey holder's only (an RLock draws
//	                none); renewed_ms how long ago the hold was renewed,
//	                its TTL against the watchdog lease (-lease, 30s),
//	                null if its TTL is over the lease or it has none;
//	                running_down when that is longer than a watchdog
//	                allows (a third of the lease, plus a sixth or 1s);
//	                process as below
//	token           the fencing counter (the latest token drawn), or null
//	permits, count  semaphores: permits available (the count in Redis);
//	                latch: the count (a plain integer: both); null for
//	                the other kinds
//	permits_acquired, permits_expired, permits_total
//	                permitsemaphore: permits held (lease running),
//	                expired (lease over, not reclaimed yet: the next
//	                call gives them back to the pool), and the three
//	                with permits together; null for a semaphore, which
//	                keeps no record of its holders (its total is unknown)
//	permit_ids      permitsemaphore: the permits held, [{id, expires_ms,
//	                ttl_ms}], -1 for a permanent permit
//	expired_permit_ids
//	                permitsemaphore: the expired ones, ttl_ms 0
//	queue           waiters, first in line first: [{owner, client, mode,
//	                permits, deadline_ms, in_ms, alive, lapsed_ms,
//	                listening, process}] (see Waiters below)
//	process         the process behind a latchkey owner, as it records
//	                itself (latchkey_process:{<uuid>}, see the latchkey
//	                package's Process record): {host, pid, program,
//	                started, version, age_ms}, age_ms how long ago it
//	                last wrote the record (every minute while it runs);
//	                omitted for Redisson's owners and for a process with
//	                no record (lapsed 5 minutes after it ended, or turned
//	                off)
//	channel, subscribers
//	                the channel on which waiters without a queue entry
//	                wait, and how many connections listen on it (see
//	                Waiters below); null subscribers for a fair lock
//	                and a plain integer, or where the server will not
//	                count (an ACL without PUBSUB)
//	granted, grants a lock's grant to a waiter, not taken yet (owner); a
//	                semaphore's ([] of queue entries, deadline_ms the end
//	                of the grace)
//	leader, note    an election's leader {owner, value, term}; a remark
//
// Every list is [], never null, when it is empty; evict takes a waiter's
// owner as queue shows it, release -id a permit_ids id.
//
// Waiters. A queue entry lapses at its deadline unless its waiter renews
// it: a latchkey waiter renews its entry at each attempt, every few
// seconds while it lives, so the deadline is its heartbeat; a Redisson
// fair-lock waiter's deadline is its wait timeout (fairLockWaitTimeout).
// inspect's LIVENESS column says "alive, heartbeat lapses in 4s" (not
// when it will be served: an entry is renewed for as long as its waiter
// waits), or "dead, heartbeat lapsed 12s ago" (the entry is left until a
// call on the synchronizer purges it: evict, or clear for a free lock,
// removes it now), or "dead, not listening": its own channel (a latchkey
// waiter's Hub's, latchkey_lock__channel:{NAME}:<hub id> or
// latchkey_semaphore__channel:{NAME}:<hub id>, or a Redisson fair-lock
// waiter's redisson_lock__channel:{NAME}:<owner>) has no subscriber, the
// signal by which a release skips a dead waiter. In JSON: alive,
// lapsed_ms (how long ago the deadline passed, 0 if it has not) and
// listening (whether its channel has a subscriber; null for an entry
// without a channel of its own: a read-write lock's waiting writer, a
// polling client's, Redisson's place in a latchkey queue). Readers held
// back by a writer, a latch's waiters, and Redisson's lock and semaphore
// waiters have no queue entry: they wait on the synchronizer's shared
// channel (redisson_rwlock:{NAME}, redisson_countdownlatch__channel__{NAME},
// redisson_lock__channel:{NAME}, redisson_sc:{NAME}), and subscribers
// (LISTENING in the table, "+N listening" in ls) counts the connections
// listening there, by PUBSUB NUMSUB (summed over a cluster's nodes), or
// SHARDNUMSUB where the library uses sharded pub/sub. A connection is a
// client process, not a waiter: latchkey's Hub and Redisson's client each
// subscribe once however many of their waiters wait; queued waiters that
// listen there too count, a latchkey client stays subscribed for a second
// after its last waiter left, a latchkey client whose hold has lasted
// half a second listens on its lock's channel for a force-unlock, a
// latchkey watch counts only with sharded pub/sub (elsewhere it listens by
// a pattern, which NUMSUB leaves out), and a client set to poll
// (latchkey.SetPolling) never subscribes. unlock's "N queued, M clients
// listening" counts both.
//
// Kinds. inspect and ls tell a kind from every key beside the name: a
// fair lock by Redisson's fair queue, latchkey's heartbeats, or its
// fencing counter latchkey_lock_token:{NAME} (latchkey's fair locks draw
// it at each acquisition); a mutex by latchkey's queue, grant or fencing
// counter redisson_lock_token:{NAME}, an election's record, or a
// subscriber on its shared channel (RLock's waiters wait there; a fair
// lock's each on their own). A Redisson lock hash with none of these is an
// RLock or an RFairLock nobody waits for, which Redis cannot tell apart:
// its kind is "mutex|fairlock", and unlock and clear treat it as a mutex,
// which frees either. An integer is a permit semaphore by its permit zset
// {NAME}:timeout or its waiters' entries, a semaphore by its waiters'
// entries or grants or a subscriber on redisson_sc:{NAME}, a latch by a
// subscriber on its channel; otherwise "semaphore|countdownlatch", and
// when nothing at all lies beside it (no queue, no listeners' or turn
// key either) ls leaves it out as no synchronizer's (ls -all lists it).
// Nothing tells a permit semaphore none of whose permits is held, nobody
// waiting, from a semaphore: Redisson and latchkey write nothing else.
// ls also lists a name whose own key is gone but whose waiter queue is
// left (a lock whose holder's lease ran out after every process died: the
// queues have no TTL), with a note "free; N dead waiters queued: run
// latchkey clear NAME"; unlock of it says the same.
//
// Deadlocks. deadlocks lists the synchronizers as ls does and draws the
// wait-for graph across processes: a node is a process (the UUID, first
// half of each owner id <uuid>:<n>, under which a latchkey process records
// its host and pid; a Redisson client's), an edge goes from each live
// queued waiter's process to each holder's process of what it waits for.
// Each cycle prints with the processes' hosts and pids, what each holds
// and waits for, and the command that breaks it: latchkey unlock of one
// of its locks, whose holder is named. It looks again after -settle (1s)
// and keeps the cycles whose holds and waits are the same calls'. It
// cannot see a semaphore's holders (a cycle through one is "possible"),
// a process's goroutines or threads apart (an unrelated hold and wait in
// one process close a cycle too), waiters without a queue entry (Java
// clients' RLock and semaphore waiters, readers behind a writer), nor the
// waiters whose entry names no process (Redisson's place in a latchkey
// queue, a permit semaphore's). deadlocks -json prints one object per
// cycle: {possible, processes: [{process, client, record, holds {name,
// kind, owner} or null, may_hold (a semaphore), waits_for {name, kind,
// owner}, position}], break: {command, name, holder, owner} or null}.
//
// Holders. inspect's holder table shows each holder's fencing token (a
// latchkey holder's; an RLock draws none, so a Java holder shows none,
// and COUNTER, the latest token drawn, is an earlier holder's), its
// process (latchkey's owners: host, pid, program, from its record), and
// its LIVENESS: "renewed 4s ago" (its TTL against the watchdog lease,
// -lease, 30s by default: a watchdog sets the TTL back to the lease every
// third of it), "not renewed for 25s (on a 30s lease), expires in 5s" when
// the TTL has run down further than a watchdog allows (its holder is
// frozen, cut off or dead, or took a fixed lease shorter than -lease), or
// "TTL over the 30s lease" (a fixed lease, or a longer watchdog: pass
// -lease); for a latchkey holder, also when its process last wrote its
// record (every minute while it runs), "process silent" when it is older
// than that, or "no process record" (it lapsed 5 minutes after its process
// stopped, or is turned off). ls shows the same in a few words.
//
// Exit status, for scripts:
//
//	0  success
//	1  Redis could not be reached, or a command failed
//	2  a usage error, among them a node of a Redis Cluster reached without
//	   -cluster (it holds only some of the keys)
//	3  nothing here: no synchronizer under a name given (inspect, and the
//	   commands that change one), no name matching ls's pattern, or no
//	   waiter or permit with the id given
//	4  not locked: unlock of a lock nobody holds
//	5  not confirmed: the prompt was answered no, or a command that asks
//	   ran without -yes on a stdin that is not a terminal; nothing was done
//	6  refused: what Redis holds does not allow the command: unlock or
//	   clear of what is no lock, clear of a held lock, release or
//	   countdown of another kind, a plain integer without -kind, a -kind
//	   of another family than the key's (which it says); nothing was done
//	7  partial: ls's (or deadlocks') listing lacks what stderr says (a
//	   master that failed, or a round trip past -timeout); the rows
//	   printed are right
//	8  deadlock: deadlocks found processes that wait for each other
package main
