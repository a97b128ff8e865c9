package acquire_test

import (
	"context"
	"errors"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/acquire"
	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/redis/go-redis/v9"
)

// steps is a scripted primitive: Send answers from answers in turn, and
// every other step is recorded.
type steps struct {
	answers  []func() (acquire.Answer, error)
	sent     int
	undone   int
	undoCtx  context.Context
	restarts int
	unsure   []bool // whether each Abandon settled an unanswered attempt
	settled  bool
}

func (s *steps) machine(client redis.UniversalClient, lease time.Duration) *acquire.Machine {
	return acquire.New(acquire.Steps{
		Client: client,
		Send: func(context.Context) (acquire.Answer, error) {
			a := s.answers[s.sent]
			s.sent++
			return a()
		},
		Undo:    func(ctx context.Context) { s.undone++; s.undoCtx = ctx },
		Lease:   lease,
		Restart: func() { s.restarts++ },
		Settle:  func(context.Context) (bool, error) { s.settled = true; return false, nil },
		Leave: func(context.Context) error {
			s.unsure, s.settled = append(s.unsure, s.settled), false
			return nil
		},
	})
}

func granted() (acquire.Answer, error) { return acquire.Answer{Granted: true}, nil }
func refused() (acquire.Answer, error) { return acquire.Answer{Retry: time.Second}, nil }
func lost() (acquire.Answer, error) {
	return acquire.Answer{}, errors.New("i/o timeout") // sent, its reply lost
}

var (
	withRetries = redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	noRetries   = redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	refusedDial = &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
)

func TestMachine_refusalThenGrant(t *testing.T) {
	s := &steps{answers: []func() (acquire.Answer, error){refused, granted}}
	m := s.machine(withRetries, 0)
	ctx := context.Background()
	if ok, retry, err := m.Attempt(ctx); ok || err != nil || retry != time.Second {
		t.Fatalf("refused attempt = %v, %v, %v; want false, 1s, nil", ok, retry, err)
	}
	before := time.Now()
	if ok, _, err := m.Attempt(ctx); !ok || err != nil {
		t.Fatalf("granted attempt = %v, %v; want true, nil", ok, err)
	}
	if m.Since().Before(before) {
		t.Error("Since is the refused attempt's time: a refusal granted nothing, so the hold starts with the granting attempt")
	}
	m.Abandon(ctx)
	if len(s.unsure) != 1 || s.unsure[0] {
		t.Errorf("Abandon told unsure = %v, want false: every attempt was answered", s.unsure)
	}
}

// An attempt whose reply was lost may have been applied: the hold dates
// from it, and a call giving up must settle it.
func TestMachine_unansweredAttempt(t *testing.T) {
	s := &steps{answers: []func() (acquire.Answer, error){lost, granted}}
	m := s.machine(withRetries, time.Hour)
	ctx := context.Background()
	if ok, _, err := m.Attempt(ctx); ok || err == nil {
		t.Fatalf("unanswered attempt = %v, %v; want its error", ok, err)
	}
	between := time.Now()
	if ok, _, err := m.Attempt(ctx); !ok || err != nil {
		t.Fatalf("the resend = %v, %v; want true, nil", ok, err)
	}
	if !m.Since().Before(between) {
		t.Error("Since is the resend's time, want the unanswered attempt's: it may have made the grant")
	}

	s = &steps{answers: []func() (acquire.Answer, error){lost}}
	m = s.machine(withRetries, time.Hour)
	_, _, _ = m.Attempt(ctx)
	m.Abandon(ctx)
	if len(s.unsure) != 1 || !s.unsure[0] {
		t.Fatalf("Abandon told unsure = %v, want true", s.unsure)
	}
}

// A dial error on a client without retries proves the request never
// left: nothing to settle. With go-redis's retries, it proves nothing.
func TestMachine_neverSent(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		client redis.UniversalClient
		unsure bool
	}{{noRetries, false}, {withRetries, true}} {
		s := &steps{answers: []func() (acquire.Answer, error){func() (acquire.Answer, error) {
			return acquire.Answer{}, refusedDial
		}}}
		m := s.machine(tc.client, 0)
		if _, _, err := m.Attempt(ctx); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("Attempt = %v, want the dial error", err)
		}
		m.Abandon(ctx)
		if s.unsure[0] != tc.unsure {
			t.Errorf("retries %v: Abandon told unsure = %v, want %v", tc.client == withRetries, s.unsure[0], tc.unsure)
		}
	}
}

// A grant no replica acknowledged is given back at once, detached, and
// the call fails with ErrNotReplicated; nothing is left to settle.
func TestMachine_notReplicated(t *testing.T) {
	s := &steps{answers: []func() (acquire.Answer, error){lost, func() (acquire.Answer, error) {
		return acquire.Answer{Granted: true, Reply: rt.Reply{Replicas: 1, Acked: 0}}, nil
	}}}
	m := s.machine(withRetries, time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	_, _, _ = m.Attempt(ctx)
	_, _, err := m.Attempt(ctx)
	cancel()
	if !errors.Is(err, lockerr.ErrNotReplicated) {
		t.Fatalf("Attempt = %v, want ErrNotReplicated", err)
	}
	if s.undone != 1 || s.undoCtx.Err() != nil {
		t.Fatalf("undone %d times (ctx %v), want once, with a ctx the call's end does not cancel", s.undone, s.undoCtx.Err())
	}
	m.Abandon(context.Background())
	if s.unsure[0] {
		t.Error("Abandon told unsure after the grant was given back: the record answered for the lost attempt")
	}
}

// A grant answered after its lease may have run out is given back, and the
// acquisition goes on under a new request.
func TestMachine_grantTooLate(t *testing.T) {
	const lease = 30 * time.Millisecond
	s := &steps{}
	s.answers = []func() (acquire.Answer, error){
		func() (acquire.Answer, error) { time.Sleep(lease); return granted() },
		granted,
	}
	m := s.machine(withRetries, lease)
	ctx := context.Background()
	if ok, retry, err := m.Attempt(ctx); ok || err != nil || retry != 0 {
		t.Fatalf("late grant = %v, %v, %v; want false, 0, nil (try again at once)", ok, retry, err)
	}
	if s.undone != 1 || s.restarts != 1 {
		t.Fatalf("undone %d, restarted %d; want 1 and 1", s.undone, s.restarts)
	}
	if ok, _, err := m.Attempt(ctx); !ok || err != nil {
		t.Fatalf("the next attempt = %v, %v; want true", ok, err)
	}
	// Without a lease, a slow answer is no reason to give the grant back.
	s = &steps{answers: []func() (acquire.Answer, error){func() (acquire.Answer, error) { time.Sleep(lease); return granted() }}}
	if ok, _, _ := s.machine(withRetries, 0).Attempt(ctx); !ok || s.undone != 0 {
		t.Fatalf("slow grant without a lease = %v, undone %d; want kept", ok, s.undone)
	}
}

// A refusal for good ends the call with its error and leaves nothing to
// settle.
func TestMachine_refusedForGood(t *testing.T) {
	s := &steps{answers: []func() (acquire.Answer, error){func() (acquire.Answer, error) {
		return acquire.Answer{Refused: lockerr.ErrWouldDeadlock}, nil
	}}}
	m := s.machine(withRetries, 0)
	if _, _, err := m.Attempt(context.Background()); !errors.Is(err, lockerr.ErrWouldDeadlock) {
		t.Fatalf("Attempt = %v, want ErrWouldDeadlock", err)
	}
	m.Abandon(context.Background())
	if s.unsure[0] || s.undone != 0 {
		t.Fatalf("unsure %v, undone %d; want nothing to settle", s.unsure[0], s.undone)
	}
}
