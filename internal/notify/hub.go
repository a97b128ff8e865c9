package notify

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/redis/go-redis/v9"
)

// ErrClosed is returned by a closed Hub. It matches latchkey.ErrClosed.
var ErrClosed = lockerr.ErrClosed

// A Hub multiplexes the channel subscriptions of many waiters over one
// subscriber connection (one per cluster master in sharded mode). A Hub is
// safe for concurrent use. Its connection is opened on first use and closed
// after it has had no channels for the idle timeout.
type Hub struct {
	client redis.UniversalClient
	cfg    config
	done   chan struct{}
	id     string

	modeMu  sync.Mutex
	modeSet bool
	sharded bool
	probe   *probe // the look at the cluster under way, if any

	mu     sync.Mutex
	closed bool
	conns  map[string]*conn
	chans  map[string]*channel
}

type channel struct {
	name     string
	conn     *conn
	policy   WakePolicy
	counting bool // its waiters count messages (see Want.Counter)
	subs     []*Subscription
	taps     []*Subscription // see Tap
	pending  bool            // a SUBSCRIBE awaits the server's reply
	sendFail bool            // no SUBSCRIBE of it was written yet, or the last failed
	sending  *send           // the SUBSCRIBE queued or being written, if any
	ready    chan struct{}
	linger   *time.Timer // set while it has no waiters but stays subscribed
}

// New returns a Hub that subscribes through client. It does no I/O.
func New(client redis.UniversalClient, opts ...Option) *Hub {
	if client == nil {
		panic("pubsub: New: nil client")
	}
	cfg := defaults()
	for _, o := range opts {
		o(&cfg)
	}
	return &Hub{
		client: client,
		cfg:    cfg,
		done:   make(chan struct{}),
		id:     uuid.NewString(),
		conns:  make(map[string]*conn),
		chans:  make(map[string]*channel),
	}
}

// Close closes every subscriber connection and wakes every waiter; their
// Subscriptions report Done. Later calls to Subscribe return ErrClosed, and
// so does a second Close.
func (h *Hub) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return ErrClosed
	}
	h.closed = true
	close(h.done)
	conns := h.conns
	h.conns, h.chans = map[string]*conn{}, map[string]*channel{}
	h.mu.Unlock()
	var errs []error
	for _, c := range conns {
		errs = append(errs, c.close())
	}
	return errors.Join(errs...)
}

// ID returns a random id unique to this Hub. A primitive that wants one
// waiter of this Hub, rather than every Hub, woken names a channel after it.
func (h *Hub) ID() string { return h.id }

// Done returns a channel closed when h is closed.
func (h *Hub) Done() <-chan struct{} { return h.done }

// Linger returns how long h stays subscribed to a channel after its last
// waiter left (see WithLinger).
func (h *Hub) Linger() time.Duration { return max(h.cfg.linger, 0) }

// Client returns the client whose servers h listens to.
func (h *Hub) Client() redis.UniversalClient { return h.client }

// PublishCommand returns the command the scripts publish with: SPUBLISH when
// this Hub uses sharded pub/sub, PUBLISH otherwise.
func (h *Hub) PublishCommand(ctx context.Context) (string, error) {
	sharded, err := h.isSharded(ctx)
	if err != nil {
		return "", err
	}
	if sharded {
		return "SPUBLISH", nil
	}
	return "PUBLISH", nil
}

// Subscribed reports whether the Hub listens on channel name, confirmed by
// the server, so that a Subscribe to it returns without any I/O.
func (h *Hub) Subscribed(name string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	ch := h.chans[name]
	return ch != nil && !ch.pending && !ch.sendFail
}

// Stats describes a Hub's current load.
type Stats struct {
	Connections int // open subscriber connections
	Channels    int // channels subscribed or being subscribed, lingering ones included
	Waiters     int // open Subscriptions
}

// Stats returns the Hub's current load.
func (h *Hub) Stats() Stats {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := Stats{Connections: len(h.conns), Channels: len(h.chans)}
	for _, ch := range h.chans {
		s.Waiters += len(ch.subs) + len(ch.taps)
	}
	return s
}

// Unwrap returns the Hub behind a *pubsub.Hub, or nil for a nil one. Package
// pubsub, the public facade, sets it.
var Unwrap func(public any) *Hub
