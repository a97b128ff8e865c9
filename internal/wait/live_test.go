package wait_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/internal/wait"
)

// liveMail records what Live told it before each attempt.
type liveMail struct {
	mu   sync.Mutex
	told []bool
}

var _ wait.Mail = (*liveMail)(nil)

func (m *liveMail) Key() string                                    { return "k" }
func (m *liveMail) Letter(string, time.Time) (bool, time.Duration) { return false, 0 }
func (m *liveMail) Live(heard bool) {
	m.mu.Lock()
	m.told = append(m.told, heard)
	m.mu.Unlock()
}

func (m *liveMail) values() []bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.told)
}

// A waiter is told its letters can reach it only once the server confirmed
// its Hub's subscription: a fresh channel's first attempt hears false, the
// one after subscribing true; a channel the Hub listens on already is live
// from the first attempt.
func TestUntil_mailLive(t *testing.T) {
	for _, tc := range []struct {
		name      string
		listening bool
		want      []bool
	}{
		{"fresh channel", false, []bool{false, true}},
		{"live channel", true, []bool{true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, _ := hubOn(t)
			channel := "wait-test:" + t.Name()
			if tc.listening {
				other, err := h.SubscribeWant(context.Background(), notify.Want{Name: channel, Policy: notify.WakeOne, Key: "other"})
				if err != nil {
					t.Fatal(err)
				}
				defer other.Close()
			}
			f := &fake{retry: longBusy}
			m := &liveMail{}
			s := f.spec(h, channel)
			s.Mail = m
			ctx, cancel := context.WithCancel(context.Background())
			out := run(ctx, -1, s)
			deadline := time.Now().Add(giveUp)
			for f.attempts() < len(tc.want) && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			time.Sleep(50 * time.Millisecond) // an attempt too many would show
			cancel()
			if r := await(t, out); r.ok || r.err == nil {
				t.Fatalf("Until = %v, %v; want the ctx's error", r.ok, r.err)
			}
			if got := m.values(); !slices.Equal(got, tc.want) {
				t.Errorf("Live told %v before the attempts, want %v", got, tc.want)
			}
		})
	}
}
