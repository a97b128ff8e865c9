// Package latchkey holds what every latchkey primitive shares: owner
// contexts, the sentinel errors, and Close.
//
// latchkey is Redisson's distributed synchronizers for Go, on go-redis v9,
// with Redisson's keys, hash fields, channels and messages, so that a Go
// service and a Java service using Redisson can share a lock. Import one
// package per primitive:
//
//   - mutex: a reentrant lock with a watchdog lease and a fencing token
//     (Redisson RLock, RFencedLock). A drop-in for a sync.Mutex shared
//     across processes.
//   - fairlock: a first-come, first-served lock (RFairLock) whose queue
//     serves Java and Go waiters in arrival order and skips crashed
//     latchkey waiters within seconds; with a fencing token.
//   - rwlock: a reentrant read-write lock with write-to-read downgrade
//     (RReadWriteLock); write holds have a fencing token.
//   - semaphore: a counting semaphore without owners (RSemaphore).
//   - permitsemaphore: a semaphore whose permits have ids and leases, so a
//     crashed holder's permits come back (RPermitExpirableSemaphore).
//   - countdownlatch: a count-down latch (RCountDownLatch).
//   - multilock: all or nothing over several locks (RedissonMultiLock),
//     which reports the first member lost.
//   - redlock: a quorum lock over independent Redis masters that computes
//     its validity (RedissonRedLock, done right).
//   - election: leader election on a mutex, in the shape of etcd's
//     concurrency.Election, each leadership's term a fencing token.
//
// Every lock reports a hold that ends without its unlock (Done, Err,
// LockContext), tells how long its hold is known valid (Deadline), and,
// taken with a fixed lease, can be extended (Extend). A holder forced out
// (a ForceUnlock, the CLI's unlock, a Redisson client's forceUnlock or
// delete) is told within about a second: a hold that lasts half a second
// has its Hub listen on the lock's channel, where those publish. A client
// set to poll (SetPolling) subscribes to nothing, and learns it at its
// next renewal.
//
// # Waiting
//
// A blocked call sleeps until a message on the primitive's channel says the
// state changed, or until a bound that the data gives (the holder's TTL, a
// permit's expiry) runs out; nothing polls on a fixed interval. All waiters
// of a go-redis client share one subscriber connection, the pubsub.Hub.
// Where the network refuses SUBSCRIBE, [SetPolling] makes a client's
// waiters poll instead, on a schedule that keeps their queue's order.
//
// # Owners
//
// A primitive handle is safe for concurrent use, and goroutines sharing one
// exclude each other as they would sharing a sync.Mutex. Reentrancy is
// opt-in: [WithOwner] marks a context as one owner, like a Java thread in
// Redisson, and that owner may lock again while it holds. [OwnerID] and
// [WithOwnerID] hand an owner to another process.
//
// # Errors
//
// Every package wraps the sentinels defined here, so errors.Is(err,
// latchkey.ErrNotHeld) holds for an error from any primitive. A call whose
// ctx ends returns an error matching ctx.Err().
//
// # Deadlines and clean-up
//
// Every call returns by its ctx deadline: blocking calls (Lock, RLock,
// Acquire, Wait and their Try forms), queries (IsLocked, TTL,
// AvailablePermits, Count, Leader, ...) and clean-up calls alike, also
// against a server that stalls or a network that drops packets. go-redis bounds a read by the ctx's deadline only on a
// client with ContextTimeoutEnabled; on any other, each request of a call
// with a deadline goes from a goroutine of its own, which costs it a
// hand-over between goroutines (tens of µs on a small VM): set
// ContextTimeoutEnabled to save it. A ctx without a deadline is cancelled
// at go-redis's pace: between requests, or when a read times out. What a
// call that gave up leaves behind (its place in a queue, a grant that
// reached it too late, an attempt whose answer was lost or is still on its
// way) is undone off the caller's path, detached and bounded: the caller
// does not wait for it once its ctx has ended. A wait budget that ran out
// while Redis answered (TryLock returning false) cleans up before it
// returns. A single attempt (TryLock(ctx, 0) and the like) is one request,
// answered with its result or its error.
//
// Against a server that cannot be reached, a call rides out the outage
// (retrying with a backoff up to a second) until its ctx ends or the
// outage has lasted the client's ride-out, 30s unless [SetRideOut] says
// otherwise; then it returns the outage's error. go-redis may take its own
// retries to fail one request (about 1.7s against a refused port with its
// default options), which comes on top.
//
// A clean-up call (Unlock, RUnlock, Release, ReleaseAll, CountDown,
// ForceUnlock, an election's Resign, and MultiLock's and RedLock's Unlock)
// is not cut short by its ctx: its requests are sent detached from ctx's
// cancellation and deadline, with ctx's values (an owner among them), and
// go on until Redis answers or the ride-out runs out. An ended ctx thus
// never strands a hold, and `defer m.Unlock(ctx)` with a request's ctx
// frees the lock. The call itself returns by ctx's deadline: with the
// answer if it came first; otherwise with an error matching ctx.Err()
// (given a ctx that already ended, at once), while its requests go on in
// the background and apply once (go-redis's resends and latchkey's retries
// of a release count once: each carries a request record), and the
// handle's books follow their answer. A retried unlock of a plain hold
// then finds it not held, which is harmless; but another Release of
// permits, CountDown or unlock by an owner counts again, as any second call
// would: after such an error the clean-up is under way, so do not repeat
// it. Only when no answer came within the ride-out is the outcome unknown:
// a lock handle then ends its hold all the same (nothing renews it, and the
// lock expires with its lease if the release did not apply).
//
// # Names
//
// A primitive's name is its Redis key, and its other keys and channels are
// derived from it as Redisson derives them: prefix:{name}, or prefix:name
// when the name already carries a hash tag, so that on Redis Cluster they
// all share one hash slot. A name is data ("order:" + id): every string is
// accepted, New never panics for one, and on a single server every name
// works as it does with Redisson, the empty one and unbalanced braces
// included. On a Redis Cluster a name must keep all its keys in one slot:
// it must not be empty, and if it has braces they must make a non-empty
// hash tag (a '{' followed later by a '}' with something between them), so
// that names such as "a{b", "{}x", "x{}" or "a}b" do not. Every call on a
// primitive with such a name on a cluster client returns an error matching
// [ErrCrossSlot], which says why, without sending anything; give the name
// a hash tag, such as {id} in "order:{id}", to use it there.
//
// # Replicas
//
// On a master with replicas, every write that grants, renews or releases
// waits until a replica acknowledges it (Redis WAIT on the same connection,
// as Redisson's synced eval), for at most a second by default. An
// acquisition that no replica acknowledged is undone and fails with
// [ErrNotReplicated], since a failover could otherwise hand the same lock
// or permits to another client; a release or count-down is applied on the
// master all the same and reports the error. Each primitive's
// WithReplicaSync option sets the timeout, or turns this off. A client
// counts a master's replicas (INFO replication) with its first write to
// it, and again, within a write's own round trip, once the count is a
// second old: a replica that attaches is waited for within about a second.
// WAIT makes a lost write much less likely, not impossible: use fencing
// tokens where it matters.
//
// # Permissions
//
// latchkey runs Lua scripts, and Redis checks every command a script runs
// against the ACL of the connection's user, so a least-privilege user
// needs the commands the scripts use as well as those the client sends.
// For primitives whose names all start with app: (keys such as app:orders,
// redisson_lock__channel:{app:orders}, {app:orders}:timeout), on Redis 7:
//
//	ACL SETUSER locker on >password resetkeys resetchannels -@all
//	  +eval +evalsha +script|load +script|exists +ping +info +wait +time
//	  +get +set +del +unlink +exists +type +incr +incrby +decr +decrby +pexpire +pttl
//	  +hget +hset +hdel +hexists +hincrby +hgetall +hkeys +hlen
//	  +lindex +lpop +lpos +lrange +lrem +lset +rpush
//	  +zadd +zcard +zcount +zrange +zrangebyscore +zrem +zremrangebyscore +zscore
//	  +publish +spublish +subscribe +unsubscribe +ssubscribe +sunsubscribe
//	  +pubsub|numsub +pubsub|shardnumsub +cluster|slots +cluster|shards +cluster|nodes
//	  +readonly ~app:* ~*{app:* &*{app:* ~latchkey_process:*
//
// The last line grants the keys and channels; a name that carries its own
// hash tag ({app}:orders) needs patterns that match its derived keys
// (~*{app}* &*{app}*). ~latchkey_process:* lets the process write its
// record (see Process record); without it, the first write is refused,
// Redis logs the denial once per client, and no other is tried.
//
// A user set up by ACL categories, as Redisson's users often are, needs
// TIME by name: it is only in @fast, and the scripts date the grants they
// write with the server's clock:
//
//	ACL SETUSER locker on >password resetkeys resetchannels -@all
//	  +@read +@write +@scripting +@pubsub +@connection -@dangerous +time
//	  ~app:* ~*{app:* &*{app:* ~latchkey_process:*
//
// Such a user may not run INFO (@dangerous), which tells latchkey whether
// a master has replicas to wait for (see Replicas): latchkey then counts
// them with WAIT, in @connection, as the replicas that acknowledge within
// 50ms (the first synced write to each master pays that once per client),
// and keeps counting one that falls silent for 60s, as long as a master
// lists a silent replica by default. A user that may run neither gets every
// synced write refused with an error that says to grant +info or +wait, or
// to turn replica sync off; replica sync never turns itself off in
// silence. On a Redis Cluster, go-redis itself also needs +cluster|slots,
// which the categories above deny. The conformance suite runs once as
// each of these two users and checks that Redis logged no denial.
//
// # Process record
//
// Each process records itself through each go-redis client it uses, so
// that a tool that finds a latchkey owner id on a lock or in a queue (the
// CLI's inspect) can say which process holds or waits: the first half of
// an owner id, <uuid>:<n>, is the process's UUID, and the record is the
// string key latchkey_process:{uuid}, holding JSON:
//
//	{"host":"web-7","pid":4121,"program":"orders-svc",
//	 "started":"2026-11-26T05:08:56Z","version":"v1.4.0"}
//
// that is the host name, the pid, the base name of os.Args[0], when
// latchkey was loaded into the process, and latchkey's module version when
// the build says. The client's first write to a synchronizer fires the
// record's, in the background: no call waits for it, and no error of it
// reaches a caller. A SET with a TTL of 5 minutes, it is rewritten every
// minute until [Close] (after which it lapses), so a record outlives its
// process by 5 minutes at most and a process that holds a lock for days
// keeps its record. A server that refuses the write (an ACL without the
// key, NOPERM; a read-only replica) is not asked again by that client. Redisson's owners have no record.
// [SetProcessRecord] turns it off for a client, for a deployment that
// should not put host names and pids in Redis.
//
// # Resources
//
// latchkey keeps a pub/sub Hub, a watchdog and the timer that rewrites the
// process record per go-redis client, created on first use. [Close]
// releases them; call it before closing the client.
package latchkey
