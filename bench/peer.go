package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync/atomic"
)

// A Peer is a lock service other than Redis that some impls run on (etcd,
// PostgreSQL). Like redis-server, the suite starts a throwaway one on a free
// loopback port when a selected scenario runs such an impl, and skips those
// impls with a note when it is not installed.
type Peer struct {
	Name    string // "etcd"
	Package string // the Debian package that installs it, for the note
	// Start starts a server with its data in dir, which it may chown; an
	// error that wraps errNotInstalled means the binaries are missing.
	Start func(ctx context.Context, dir string) (*peerProc, error)
	// Dial returns one worker's connection to the server at addr, counting
	// every request it sends in sent, and a function that closes it.
	Dial func(ctx context.Context, addr string, sent *atomic.Int64) (any, func(), error)
}

// A peerProc is a running peer server.
type peerProc struct {
	Addr    string
	Version string
	proc    *proc
	dir     string
}

func (pp *peerProc) stop() {
	pp.proc.stop()
	_ = os.RemoveAll(pp.dir)
}

// startPeers starts the peers of the given impls into env.Peers and
// returns the impls that can run: those on Redis and those whose peer
// started. Each impl left out gets a note, also written to log.
func startPeers(ctx context.Context, env *Env, ims []*Impl, log io.Writer) ([]*Impl, []string) {
	var (
		out    []*Impl
		notes  []string
		failed = map[*Peer]string{}
	)
	for _, im := range ims {
		p := im.Peer
		if p == nil {
			out = append(out, im)
			continue
		}
		if env.Peers[p] == nil && failed[p] == "" {
			pp, err := startPeer(ctx, p)
			switch {
			case errors.Is(err, errNotInstalled):
				failed[p] = fmt.Sprintf("%s is not installed (Debian package %s)", p.Name, p.Package)
			case err != nil:
				failed[p] = fmt.Sprintf("%s did not start: %v", p.Name, err)
			default:
				env.Peers[p] = pp
				fmt.Fprintf(log, "bench: %s %s at %s\n", p.Name, pp.Version, pp.Addr)
			}
		}
		if why := failed[p]; why != "" {
			note := fmt.Sprintf("skipped %s: %s", im.Name, why)
			notes = append(notes, note)
			fmt.Fprintln(log, "bench: "+note)
			continue
		}
		out = append(out, im)
	}
	return out, notes
}

func startPeer(ctx context.Context, p *Peer) (*peerProc, error) {
	dir, err := os.MkdirTemp("", "latchkey-bench-"+p.Name+"-")
	if err != nil {
		return nil, err
	}
	pp, err := p.Start(ctx, dir)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	pp.dir = dir
	return pp, nil
}

// stopPeers stops every peer in env.
func stopPeers(env *Env) {
	for _, pp := range env.Peers {
		pp.stop()
	}
}

// peerVersions describes the running peers, for the report.
func peerVersions(env *Env) []string {
	var out []string
	for p, pp := range env.Peers {
		out = append(out, fmt.Sprintf("%s %s", p.Name, pp.Version))
	}
	slices.Sort(out)
	return out
}
