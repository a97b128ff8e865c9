package rt

import (
	"context"
	"fmt"
	"time"

	"github.com/latchkey/latchkey/internal/flight"
	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/redis/go-redis/v9"
)

// A Write is one request that changes state.
type Write struct {
	Keys []string
	Args []any
	// Once names the request's record, made with keys.Once, for a script
	// that takes one (see scripts/fragment/once.lua): a resend of the
	// request then finds its first answer instead of applying twice. ""
	// when repeating the request is harmless.
	//
	// Sole says that no other request shares the record, as an
	// acquisition's tries share theirs until one applies: a release's,
	// say. A sole request's record is done with once the request is
	// answered (see records.go), and is deleted early. Any other's caller
	// says when it is done with it (Finished), since a later try may be
	// on its way when an earlier one is answered; or else it lives out
	// its TTL.
	Sole bool
	Once string
	// Sync is the longest the request waits, after the script, for the
	// replicas of the key's master to acknowledge it (WAIT on the same
	// connection). 0 sends no WAIT, and so does a master without replicas.
	Sync time.Duration
}

// A Reply is the answer to a Write.
type Reply struct {
	*redis.Cmd               // the script's reply
	Replicas   int           // the replicas WAIT waited for; 0 when none was sent
	Acked      int           // how many of them acknowledged the write
	Timeout    time.Duration // how long WAIT waited at most
	// Record is the request record the script took (Write.Once), or "".
	// Single reports that the send had no other copy: it was answered,
	// and sooner than go-redis pauses before a resend (see records.go).
	// A caller all of whose sends against a record were single may call
	// Finished once it sends no more.
	Record string
	Single bool
}

// Replicated reports whether the write reached a replica, or no replica
// was asked to acknowledge it.
func (r Reply) Replicated() bool { return r.Replicas == 0 || r.Acked > 0 }

// SyncErr returns nil if the write was replicated, or else an error
// matching lockerr.ErrNotReplicated that says how many replicas
// acknowledged it.
func (r Reply) SyncErr() error {
	if r.Replicated() {
		return nil
	}
	return fmt.Errorf("%w: %d of %d replicas acknowledged the write within %v",
		lockerr.ErrNotReplicated, r.Acked, r.Replicas, r.Timeout)
}

// Exec runs s as the request w on client. A script that takes a request
// record (see scripts/fragment/once.lua) gets it appended to its KEYS and
// ARGV. When w.Sync is positive and the master that owns w.Keys[0] has
// replicas, the script and WAIT go down one connection to that master in
// one round trip; otherwise the script runs as Run does. The script's own
// error, if any, is in the Reply's Cmd; so is an error that kept it from
// running.
//
// On a cluster, an error that says the topology changed (a connection
// refused, READONLY, MOVED, CLUSTERDOWN) makes the client reload its slot
// map, which go-redis does not do by itself on a dial error.
//
// Exec returns by ctx's end, with an error matching ctx.Err(), even when
// the server does not answer; the request may still apply then (see
// flight.Bounded).
func Exec(ctx context.Context, client redis.UniversalClient, s *scripts.Script, w Write) Reply {
	if !flight.Needed(ctx, client) {
		return exec(ctx, client, s, w)
	}
	r, ok := flight.Bounded(ctx, client, func(ctx context.Context) Reply { return exec(ctx, client, s, w) })
	if !ok {
		r = Failed(ctx, ctx.Err())
		r.Record = w.Once // not Single: a copy may still apply
	}
	return r
}

// exec is Exec, waiting for the answer as long as go-redis does.
func exec(ctx context.Context, client redis.UniversalClient, s *scripts.Script, w Write) Reply {
	keys, args := w.Keys, w.Args
	var book *recordBook
	if s.Recorded() {
		book = Of(client).records
		if w.Sole && w.Once != "" {
			book.sending(w.Once)
		}
		keys, args = withRecord(client, w, book.along(w.Keys), 1)
	}
	start := time.Now()
	var r Reply
	if w.Sync > 0 && len(keys) > 0 && ctx.Value(undoKey{}) == nil {
		r = execSynced(s, ctx, client, w.Sync, keys, args)
	} else {
		r = Reply{Cmd: s.Eval(ctx, client, keys, args...)}
	}
	if cc, ok := client.(*redis.ClusterClient); ok && flight.Transient(r.Err()) {
		cc.ReloadState(ctx)
	}
	crossSlot(r.Cmd)
	if book != nil && w.Once != "" {
		took := time.Since(start)
		if w.Sole {
			book.sent(w.Once, r.Err(), took)
		}
		r.Record, r.Single = w.Once, r.Err() == nil && took < book.single
	}
	// The client's first write fires its process record, in the background,
	// once the write's replica count was made: a record written before it
	// would put the replicas behind, and a count by WAIT would then wait
	// for their answers (replicasByWait).
	Of(client).process.start()
	return r
}

// withRecord appends to w's KEYS and ARGV, copying them, the records done
// with that the request deletes, their number, and the request's own
// record and its lifetime times sign (-1 to resolve the request): a
// lifetime of 0 turns the record off, and the first key then only stands
// in for the record key (see scripts/fragment/once.lua).
func withRecord(client redis.UniversalClient, w Write, old []string, sign int64) ([]string, []any) {
	keys := make([]string, 0, len(w.Keys)+len(old)+1)
	keys = append(append(append(keys, w.Keys...), old...), w.Once)
	ttl := int64(0)
	if w.Once == "" {
		keys[len(keys)-1] = w.Keys[0]
	} else {
		ttl = sign * scripts.Ms(RecordTTL(client))
	}
	return keys, append(w.Args[:len(w.Args):len(w.Args)], len(old), ttl)
}

// Failed returns the Reply of a write that could not be sent, with err.
func Failed(ctx context.Context, err error) Reply {
	cmd := redis.NewCmd(ctx)
	cmd.SetErr(err)
	return Reply{Cmd: cmd}
}

// Resend runs s as Exec does and sends it again through transient faults,
// as Retry does, for a write that is safe to send twice: one with a
// request record, or one that sets an absolute state. It returns the last
// Reply, and an error matching ctx.Err() if ctx ended first.
func Resend(ctx context.Context, client redis.UniversalClient, s *scripts.Script, w Write) (Reply, error) {
	var r Reply
	tries := 0
	err := Retry(ctx, client, func(ctx context.Context) error {
		tries++
		r = Exec(ctx, client, s, w)
		return r.Err()
	})
	if err != nil && r.Err() != err {
		r = Failed(ctx, err) // ctx ended during a pause
	}
	r.Single = r.Single && tries == 1
	return r, err
}

// Resolve learns what became of the request w, recorded against w.Once,
// that its caller gave up on without an answer, and makes sure it does
// not apply afterwards: it returns the recorded reply and true if the
// request was applied; otherwise it records the request as cancelled, so
// that a copy of it still on its way (in a socket buffer, in a go-redis
// retry) does nothing, and returns false. It rides out transient faults as
// Resend does. s must take a request record and replay it first thing.
func Resolve(ctx context.Context, client redis.UniversalClient, s *scripts.Script, w Write) (Reply, bool, error) {
	if !s.Recorded() || w.Once == "" {
		return Reply{}, false, fmt.Errorf("latchkey: resolve %s: no request record", s.Name())
	}
	keys, args := withRecord(client, w, nil, -1)
	var r Reply
	err := Retry(ctx, client, func(ctx context.Context) error {
		r = Reply{Cmd: crossSlot(s.Eval(ctx, client, keys, args...))}
		return r.Err()
	})
	if err != nil {
		return r, false, err
	}
	if v, ok := r.Val().(string); ok && v == "CANCELLED" {
		return r, false, nil
	}
	return r, true, nil
}

// Run runs s with EVALSHA and, when the server answers NOSCRIPT (after a
// restart, a failover or SCRIPT FLUSH), once more with EVAL, which also
// loads it. It works on a *redis.Client and a *redis.ClusterClient alike;
// in a cluster all keys must share one hash slot. Run is for scripts that
// change nothing, or nothing that matters if done twice; writes go through
// Exec. Run returns by ctx's deadline, with an error matching ctx.Err(),
// even when the server does not answer (see flight.Bounded).
func Run(ctx context.Context, c redis.UniversalClient, s *scripts.Script, keys []string, args ...any) *redis.Cmd {
	if s.Recorded() {
		panic("rt: " + s.Name() + " takes a request record: use Exec")
	}
	cmd, ok := flight.Bounded(ctx, c, func(ctx context.Context) *redis.Cmd { return s.Eval(ctx, c, keys, args...) })
	if !ok {
		cmd = redis.NewCmd(ctx)
		cmd.SetErr(ctx.Err())
	}
	return crossSlot(cmd)
}
