package keys

import "strings"

// The layout of every primitive: Redisson's keys and channels, and
// latchkey's beside them, each derived from the name once, here. The
// primitives, the scripts' KEYS builders and the CLI all read them from
// these.

// Every key and channel that latchkey keeps beside a primitive's own key
// begins with LatchkeyPrefix, and every one of Redisson's with
// RedissonPrefix, but those named by a suffix of the name (see Suffix): a
// read hold's timeouts (RWLock.ReadTimeouts) and a permit semaphore's
// leases (Semaphore.Leases).
const (
	LatchkeyPrefix     = "latchkey_"
	RedissonPrefix     = "redisson_"
	ReadTimeoutsSuffix = "rwlock_timeout"
	LeasesSuffix       = "timeout"
)

// QueuePrefixes returns the prefixes (see Prefix) of the waiter queues,
// which have no TTL and so outlive a primitive's own key: the mutex's,
// Redisson's fair lock's, the semaphores' and the read-write lock's
// waiting writers'.
func QueuePrefixes() []string { return []string{lockQueue, fairQueue, semaphoreQueue, rwWriters} }

const (
	lockQueue      = "latchkey_lock_queue"
	fairQueue      = "redisson_lock_queue"
	semaphoreQueue = "latchkey_semaphore_queue"
	rwWriters      = "latchkey_rwlock_writers"
)

// Lock is the layout of a mutex, a fair lock and a RedLock node: Redisson's
// RLock, RFencedLock and RFairLock keys, and latchkey's waiter queue.
type Lock struct {
	Name    string // hash: owner id -> hold count
	Token   string // redisson_lock_token:{N}: the fencing counter
	Channel string // redisson_lock__channel:{N}: Redisson's unlock channel
	// latchkey's mutex queue, beside the hash
	Queue     string // latchkey_lock_queue:{N}: waiter entries, oldest first
	Deadlines string // latchkey_lock_timeout:{N}: entry -> deadline (ms)
	Grant     string // latchkey_lock_grant:{N}: the entry a release granted, until taken
	Hubs      string // latchkey_lock__channel:{N}: prefix of each Hub's letter channel
	// Redisson's fair-lock queue, and latchkey's heartbeats beside it
	FairQueue     string // redisson_lock_queue:{N}
	FairDeadlines string // redisson_lock_timeout:{N}
	Heartbeats    string // latchkey_lock_heartbeat:{N}
	// FairToken is the fair lock's fencing counter, latchkey's own:
	// Redisson's RFairLock keeps none.
	FairToken string // latchkey_lock_token:{N}
	// Forced is latchkey_lock__forced:{N}: a ForceUnlock of the mutex or
	// fair lock publishes there the owners it forced out, space-separated,
	// so that a watch tells a force-unlock from a release.
	Forced string
	// Boxes, if set, holds the mutex's keys boxed as go-redis arguments,
	// once for all of a handle's requests (see Boxes).
	Boxes *Boxes
}

// Boxes are the keys that the mutex's scripts take, boxed as go-redis
// arguments: a handle sends the same keys with every request, and boxing
// a string allocates. Box fills them in.
type Boxes struct {
	Name, Token, Queue, Deadlines, Channel, Hubs, Grant any

	keys [7]boxedKey
}

// A boxedKey is a key as a go-redis argument that costs no allocation to
// box, being a pointer: go-redis writes it as its bytes (an
// encoding.BinaryMarshaler), and prints it, or routes by it on a cluster,
// as its string (a fmt.Stringer), so that a command's text in a trace or
// an error names the key. A *string would print as an address.
type boxedKey struct {
	s string
	b []byte // s's bytes, read only
}

func (k *boxedKey) MarshalBinary() ([]byte, error) { return k.b, nil }
func (k *boxedKey) String() string                 { return k.s }

// Box boxes l's mutex keys into b, which l then points to: b lives with the
// handle that holds l, and the keys' bytes share one allocation.
func (l *Lock) Box(b *Boxes) {
	ks := [len(b.keys)]string{l.Name, l.Token, l.Queue, l.Deadlines, l.Channel, l.Hubs, l.Grant}
	n := 0
	for _, k := range ks {
		n += len(k)
	}
	buf := make([]byte, 0, n)
	for i, k := range ks {
		at := len(buf)
		buf = append(buf, k...)
		b.keys[i] = boxedKey{s: k, b: buf[at:len(buf):len(buf)]}
	}
	b.Name, b.Token, b.Queue, b.Deadlines = &b.keys[0], &b.keys[1], &b.keys[2], &b.keys[3]
	b.Channel, b.Hubs, b.Grant = &b.keys[4], &b.keys[5], &b.keys[6]
	l.Boxes = b
}

// LockOf returns the layout of the lock called name.
func LockOf(name string) Lock {
	var k [11]string
	prefixed(k[:], name, "redisson_lock_token", "redisson_lock__channel", lockQueue, "latchkey_lock_timeout",
		"latchkey_lock_grant", "latchkey_lock__channel", fairQueue, "redisson_lock_timeout",
		"latchkey_lock_heartbeat", "latchkey_lock_token", "latchkey_lock__forced")
	return Lock{
		Name:          name,
		Token:         k[0],
		Channel:       k[1],
		Queue:         k[2],
		Deadlines:     k[3],
		Grant:         k[4],
		Hubs:          k[5],
		FairQueue:     k[6],
		FairDeadlines: k[7],
		Heartbeats:    k[8],
		FairToken:     k[9],
		Forced:        k[10],
	}
}

// prefixed sets dst[i] to Prefix(ps[i], name), the keys cut from one
// string: a layout's keys live and die together, and a handle made per
// call (a lock per order) makes them all.
func prefixed(dst []string, name string, ps ...string) {
	open, end := ":{", "}"
	if strings.Contains(name, "{") {
		open, end = ":", ""
	}
	size := func(p string) int { return len(p) + len(open) + len(name) + len(end) }
	total := 0
	for _, p := range ps {
		total += size(p)
	}
	var b strings.Builder
	b.Grow(total)
	for _, p := range ps {
		b.WriteString(p)
		b.WriteString(open)
		b.WriteString(name)
		b.WriteString(end)
	}
	all := b.String()
	for i, p := range ps {
		dst[i], all = all[:size(p)], all[size(p):]
	}
}

// RWLock is the layout of a read-write lock: Redisson's RReadWriteLock and
// latchkey's waiting writers.
type RWLock struct {
	Name    string // hash: mode, owner id -> read holds, <owner>:write -> write holds
	Channel string // redisson_rwlock:{N}
	Writers string // latchkey_rwlock_writers:{N}: waiting writer -> deadline
	Epoch   string // latchkey_rwlock_epoch:{N}: write releases while readers were held back
	Token   string // latchkey_rwlock_token:{N}: the write holds' fencing counter (Redisson keeps none)
	Forced  string // latchkey_rwlock__forced:{N}: the owners a ForceUnlock forced out (see Lock.Forced)
}

// RWLockOf returns the layout of the read-write lock called name.
func RWLockOf(name string) RWLock {
	return RWLock{
		Name:    name,
		Channel: Prefix("redisson_rwlock", name),
		Writers: Prefix(rwWriters, name),
		Epoch:   Prefix("latchkey_rwlock_epoch", name),
		Token:   Prefix("latchkey_rwlock_token", name),
		Forced:  Prefix("latchkey_rwlock__forced", name),
	}
}

// ReadTimeouts returns {N}:<field>:rwlock_timeout, the prefix of the keys
// ("<prefix>:<i>") that time each read hold of the hash field field.
func (l RWLock) ReadTimeouts(field string) string {
	return Suffix(l.Name, field+":"+ReadTimeoutsSuffix)
}

// Semaphore is the layout of a semaphore and a permit semaphore: Redisson's
// RSemaphore and RPermitExpirableSemaphore, and latchkey's waiter queue.
type Semaphore struct {
	Name      string // string: the permits available
	Leases    string // {N}:timeout: a permit semaphore's permit id -> lease end (ms)
	Channel   string // redisson_sc:{N}: Redisson's channel
	Queue     string // latchkey_semaphore_queue:{N}: waiter entries, oldest first
	Deadlines string // latchkey_semaphore_timeout:{N}: entry -> deadline (ms)
	Grants    string // latchkey_semaphore_grant:{N}: a semaphore's granted entry -> end of its grace
	Hubs      string // latchkey_semaphore__channel:{N}: prefix of each Hub's letter channel
	Listeners string // latchkey_semaphore_listeners:{N}: Hub id -> until when it may listen on Channel (ms)
	Turn      string // latchkey_semaphore_turn:{N}: set while a release leaves the permits to Redisson's waiters
}

// SemaphoreOf returns the layout of the semaphore called name.
func SemaphoreOf(name string) Semaphore {
	return Semaphore{
		Name:      name,
		Leases:    Suffix(name, LeasesSuffix),
		Channel:   Prefix("redisson_sc", name),
		Queue:     Prefix(semaphoreQueue, name),
		Deadlines: Prefix("latchkey_semaphore_timeout", name),
		Grants:    Prefix("latchkey_semaphore_grant", name),
		Hubs:      Prefix("latchkey_semaphore__channel", name),
		Listeners: Prefix("latchkey_semaphore_listeners", name),
		Turn:      Prefix("latchkey_semaphore_turn", name),
	}
}
