package rt

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/latchkey/latchkey/internal/flight"
	"github.com/latchkey/latchkey/internal/handoff"
	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/redis/go-redis/v9"
)

// A Reply is the answer to a request.
type Reply struct {
	*redis.Cmd               // the script's reply
	Replicas   int           // the replicas WAIT waited for; 0 when none was sent
	Acked      int           // how many of them acknowledged the write
	Timeout    time.Duration // how long WAIT waited at most
	// Record is the request record the script took (Request.Record), or "".
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

// A Sender is the one send path of a primitive's requests on one client:
// it writes into each request what only it knows (the client's clock,
// the publish command of the Hub the primitive waits through, the grace,
// whether a publish counts every receiver; see scripts.Input), appends
// the request's record, waits for the master's replicas after a write
// that grants, renews or releases, and returns by ctx's deadline.
type Sender struct {
	rt   *Runtime
	hub  *notify.Hub   // the Hub the primitive waits through; nil: the shared one
	sync time.Duration // how long a synced write waits for replicas; 0: none
}

// Sender returns the send path of a primitive that waits through hub
// (nil: the client's shared Hub) and whose writes wait up to sync for
// replicas.
func (r *Runtime) Sender(hub *notify.Hub, sync time.Duration) Sender {
	return Sender{rt: r, hub: hub, sync: sync}
}

// Hub returns the Hub the sender's primitive waits through.
func (s Sender) Hub() *notify.Hub {
	if s.hub != nil {
		return s.hub
	}
	return s.rt.Hub()
}

// Client returns the client the sender sends on.
func (s Sender) Client() redis.UniversalClient { return s.rt.client }

// Publish returns the command the scripts publish with (see Publish).
func (s Sender) Publish(ctx context.Context) (string, error) { return s.Hub().PublishCommand(ctx) }

// Send sends req. A script that takes a request record (see
// scripts/fragment/once.lua) gets it appended to its KEYS and ARGV. When
// req is Synced, the sender has a sync timeout and the master that owns
// req.Keys[0] has replicas, the script and WAIT go down one connection to
// that master in one round trip. The script's own error, if any, is in
// the Reply's Cmd; so is an error that kept it from running.
//
// On a cluster, an error that says the topology changed (a connection
// refused, READONLY, MOVED, CLUSTERDOWN) makes the client reload its slot
// map, which go-redis does not do by itself on a dial error.
//
// Send returns by ctx's end, with an error matching ctx.Err(), even when
// the server does not answer; the request may still apply then (see
// flight.Bounded).
func (s Sender) Send(ctx context.Context, req scripts.Request) Reply {
	if err := s.fill(ctx, &req); err != nil {
		return Failed(ctx, err)
	}
	client := s.rt.client
	// The record goes on its lane here, not in a send that may still be
	// on its way after this call returns: a later send of it must find
	// that one's lane and stamp.
	var l lane
	if req.Script.Recorded() && req.Record != "" {
		l = s.rt.records.place(req.Record)
	}
	if !flight.Needed(ctx, client) {
		return s.send(ctx, req, l)
	}
	return s.bounded(ctx, req, l)
}

// bounded is send from a goroutine of its own (see flight.Bounded). It is
// a function apart so that the closure, which moves req to the heap, costs
// only the sends that need it.
func (s Sender) bounded(ctx context.Context, req scripts.Request, l lane) Reply {
	r, ok := flight.Bounded(ctx, s.rt.client, func(ctx context.Context) Reply { return s.send(ctx, req, l) })
	if !ok {
		r = Failed(ctx, ctx.Err())
		r.Record = req.Record // not Single: a copy may still apply
	}
	return r
}

// fill writes req's inputs (see scripts.Input).
func (s Sender) fill(ctx context.Context, req *scripts.Request) error {
	if pos, ok := req.Input(scripts.Now); ok {
		req.Args[pos] = time.Now().UnixMilli()
	}
	if pos, ok := req.Input(scripts.Grace); ok {
		req.Args[pos] = graceMs
	}
	pubAt, pub := req.Input(scripts.Pub)
	countedAt, counted := req.Input(scripts.Counted)
	if !pub && !counted {
		return nil
	}
	cmd, err := s.Publish(ctx)
	if err != nil {
		return err
	}
	if pub {
		req.Args[pubAt] = publishArg(cmd)
	}
	if counted {
		req.Args[countedAt] = handoff.Counted(s.rt.client, cmd)
	}
	return nil
}

// graceMs is the Grace input, boxed once.
var graceMs any = scripts.Ms(handoff.Grace)

// publishArg returns the Pub input cmd as a value that costs no
// allocation to pass as an argument.
func publishArg(cmd string) any {
	switch cmd {
	case "PUBLISH":
		return "PUBLISH"
	case "SPUBLISH":
		return "SPUBLISH"
	}
	return cmd
}

// send is Send, with req's record on lane l, waiting for the answer as
// long as go-redis does.
func (s Sender) send(ctx context.Context, req scripts.Request, l lane) Reply {
	client, call := s.rt.client, req
	var book *recordBook
	if req.Script.Recorded() {
		book = s.rt.records
		call = withRecord(book, req, l, false)
	}
	start := time.Now()
	var r Reply
	if req.Synced && s.sync > 0 && len(call.Keys) > 0 && ctx.Value(undoKey{}) == nil {
		r = execSynced(ctx, client, s.sync, call)
	} else {
		r = Reply{Cmd: call.Eval(ctx, client)}
	}
	if cc, ok := client.(*redis.ClusterClient); ok && flight.Transient(r.Err()) {
		cc.ReloadState(ctx)
	}
	crossSlot(r.Cmd)
	if book != nil && req.Record != "" {
		took := time.Since(start)
		book.sent(req.Record, req.Sole, r.Err(), took)
		r.Record, r.Single = req.Record, r.Err() == nil && took < book.single
	}
	// The client's first write fires its process record, in the background,
	// once the write's replica count was made: a record written before it
	// would put the replicas behind, and a count by WAIT would then wait
	// for their answers (replicasByWait).
	s.rt.process.start()
	return r
}

// withRecord returns req with its KEYS and ARGV copied, and the lane l of
// its record, the record's stamp, and its lifetime in book, negated to
// resolve the request, appended. A request without a record gets a
// lifetime of 0 alone, which turns the record off (see
// scripts/fragment/once.lua): the server spends about a thousand
// instructions on each argument.
func withRecord(book *recordBook, req scripts.Request, l lane, resolve bool) scripts.Request {
	if req.Record == "" {
		req.Args = append(append(make([]any, 0, len(req.Args)+1), req.Args...), 0)
		return req
	}
	keys, keyArgs, args := scripts.Room(len(req.Keys)+1, len(req.Args)+2)
	keys = append(append(keys, req.Keys...), l.key)
	keyArgs = append(keyArgs, req.KeyArgs...)
	for len(keyArgs) < len(req.Keys) { // boxed at the send
		keyArgs = append(keyArgs, nil)
	}
	keyArgs = append(keyArgs, l.arg)
	args = append(append(args, req.Args...), l.stamp, book.ttlArgs[0])
	if resolve {
		args[len(args)-1] = book.ttlArgs[1]
	}
	req.Keys, req.KeyArgs, req.Args = keys, keyArgs, args
	return req
}

// Failed returns the Reply of a write that could not be sent, with err.
func Failed(ctx context.Context, err error) Reply {
	cmd := redis.NewCmd(ctx)
	cmd.SetErr(err)
	return Reply{Cmd: cmd}
}

// Resend sends req as Send does, and again through transient faults, as
// Retry does, for a write that is safe to send twice: one with a request
// record, or one that sets an absolute state. It returns the last Reply,
// and an error matching ctx.Err() if ctx ended first.
func (s Sender) Resend(ctx context.Context, req scripts.Request) (Reply, error) {
	var r Reply
	tries := 0
	err := Retry(ctx, s.rt.client, func(ctx context.Context) error {
		tries++
		r = s.Send(ctx, req)
		return r.Err()
	})
	if err != nil && r.Err() != err {
		r = Failed(ctx, err) // ctx ended during a pause
	}
	r.Single = r.Single && tries == 1
	return r, err
}

// Resolve learns what became of req, recorded against req.Record, that
// its caller gave up on without an answer, and makes sure it does not
// apply afterwards: it returns the recorded reply and true if the request
// was applied; otherwise it records the request as cancelled, so that a
// copy of it still on its way (in a socket buffer, in a go-redis retry)
// does nothing, and returns false. It rides out transient faults as
// Resend does. req's script must take a request record and replay it
// first thing.
func (s Sender) Resolve(ctx context.Context, req scripts.Request) (Reply, bool, error) {
	if !req.Script.Recorded() || req.Record == "" {
		return Reply{}, false, fmt.Errorf("latchkey: resolve %s: no request record", req.Script.Name())
	}
	if err := s.fill(ctx, &req); err != nil {
		return Failed(ctx, err), false, err
	}
	client := s.rt.client
	book := s.rt.records
	call := withRecord(book, req, book.place(req.Record), true)
	var r Reply
	err := Retry(ctx, client, func(ctx context.Context) error {
		r = Reply{Cmd: crossSlot(call.Eval(ctx, client))}
		return r.Err()
	})
	book.sent(req.Record, false, err, 0)
	if err != nil {
		return r, false, err
	}
	rec, _ := r.Val().(string)
	reply, applied, err := decodeRecord(rec)
	if err != nil {
		return Reply{}, false, fmt.Errorf("latchkey: resolve %s: %w", req.Script.Name(), err)
	}
	if applied {
		r.SetVal(reply) // as the request's own reply
	}
	return r, applied, nil
}

// decodeRecord reads a request record as once.lua stores it: "n<integer>"
// or "a<integer>,<integer>,..." for a request that applied, and its
// reply; "x" for one cancelled before it applied (and CANCELLED, a
// resolve's answer for a request it cancelled).
func decodeRecord(rec string) (reply any, applied bool, err error) {
	if rec == "x" || rec == "CANCELLED" {
		return nil, false, nil
	}
	if rec == "a" {
		return []any{}, true, nil
	}
	if len(rec) < 2 || rec[0] != 'n' && rec[0] != 'a' {
		return nil, false, fmt.Errorf("request record %q unreadable", rec)
	}
	var vs []any
	for f := range strings.SplitSeq(rec[1:], ",") {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, false, fmt.Errorf("request record %q unreadable", rec)
		}
		vs = append(vs, n)
	}
	if rec[0] == 'n' {
		if len(vs) != 1 {
			return nil, false, fmt.Errorf("request record %q unreadable", rec)
		}
		return vs[0], true, nil
	}
	return vs, true, nil
}

// Read runs req, a script that changes nothing, or nothing that matters
// if done twice, with EVALSHA and, when the server answers NOSCRIPT (after
// a restart, a failover or SCRIPT FLUSH), once more with EVAL, which also
// loads it. It returns by ctx's deadline, with an error matching
// ctx.Err(), even when the server does not answer (see flight.Bounded).
func (s Sender) Read(ctx context.Context, req scripts.Request) *redis.Cmd {
	if req.Script.Recorded() {
		panic("rt: " + req.Script.Name() + " takes a request record: use Send")
	}
	if err := s.fill(ctx, &req); err != nil {
		return Failed(ctx, err).Cmd
	}
	if !flight.Needed(ctx, s.rt.client) {
		return crossSlot(req.Eval(ctx, s.rt.client))
	}
	return s.boundedRead(ctx, req)
}

// boundedRead is Read from a goroutine of its own; see bounded.
func (s Sender) boundedRead(ctx context.Context, req scripts.Request) *redis.Cmd {
	c := s.rt.client
	cmd, ok := flight.Bounded(ctx, c, func(ctx context.Context) *redis.Cmd { return req.Eval(ctx, c) })
	if !ok {
		cmd = redis.NewCmd(ctx)
		cmd.SetErr(ctx.Err())
	}
	return crossSlot(cmd)
}
