package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
)

func TestStartPeersSkipsMissing(t *testing.T) {
	missing := &Peer{Name: "nothing", Package: "nothing-server",
		Start: func(context.Context, string) (*peerProc, error) {
			return nil, fmt.Errorf("%w: exec: \"nothing\": not found", errNotInstalled)
		},
		Dial: func(context.Context, string, *atomic.Int64) (any, func(), error) { return nil, nil, nil },
	}
	onRedis := &Impl{Name: "a", Kind: KindMutex}
	onPeer := &Impl{Name: "b", Kind: KindMutex, Peer: missing}
	var log bytes.Buffer
	got, notes := startPeers(context.Background(), newEnv(), []*Impl{onRedis, onPeer}, &log)
	if len(got) != 1 || got[0] != onRedis {
		t.Errorf("impls %v, want only a", got)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "skipped b: nothing is not installed (Debian package nothing-server)") {
		t.Errorf("notes %q", notes)
	}
	if !strings.Contains(log.String(), "skipped b") {
		t.Errorf("log %q", log.String())
	}
}
