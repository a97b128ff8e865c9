package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"
	"google.golang.org/grpc"
)

// etcdPeer is a throwaway single-node etcd: the binary of Debian's
// etcd-server package, with its defaults (it fsyncs every write, as etcd
// always does; a Redis without persistence does not).
var etcdPeer = &Peer{Name: "etcd", Package: "etcd-server", Start: startEtcd, Dial: dialEtcd}

func init() {
	register(&Impl{
		Name:  "etcd",
		Kind:  KindMutex,
		Rank:  24,
		Color: "#2ca02c",
		Peer:  etcdPeer,
		About: "etcd's concurrency.Mutex (go.etcd.io/etcd/client/v3) on a throwaway single-node etcd with its " +
			"defaults (every write fsynced, as etcd always does): " +
			"each handle has its own Session (lease TTL 60s, kept alive); Lock creates a key and each " +
			"waiter watches the key created just before its own (the ZooKeeper recipe). RT counts gRPC " +
			"requests, including messages sent on watch streams.",
		Open: func(ctx context.Context, c *Conn, name string) (any, error) {
			s, err := concurrency.NewSession(c.Peer.(*clientv3.Client))
			if err != nil {
				return nil, err
			}
			c.OnClose(func() { _ = s.Close() })
			return etcdMutex{concurrency.NewMutex(s, "/"+name)}, nil
		},
	})
}

type etcdMutex struct{ m *concurrency.Mutex }

func (e etcdMutex) Lock(ctx context.Context) error   { return e.m.Lock(ctx) }
func (e etcdMutex) Unlock(ctx context.Context) error { return e.m.Unlock(ctx) }

// startEtcd starts etcd on free loopback ports, trying new ones if taken.
func startEtcd(ctx context.Context, dir string) (*peerProc, error) {
	path, err := exec.LookPath("etcd")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNotInstalled, err)
	}
	for attempt := 0; ; attempt++ {
		cport, err1 := freePort()
		pport, err2 := freePort()
		if err1 != nil || err2 != nil || cport == pport {
			return nil, fmt.Errorf("no free port: %v, %v", err1, err2)
		}
		client := "http://127.0.0.1:" + strconv.Itoa(cport)
		peer := "http://127.0.0.1:" + strconv.Itoa(pport)
		p, err := startProc(path, []string{
			"--name", "bench", "--data-dir", filepath.Join(dir, strconv.Itoa(attempt)),
			"--listen-client-urls", client, "--advertise-client-urls", client,
			"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
			"--initial-cluster", "bench=" + peer,
		}, procOpts{})
		if err != nil {
			return nil, err
		}
		err = p.waitReady(ctx, 30*time.Second, func(ctx context.Context) error {
			var h struct{ Health string }
			if err := getJSON(ctx, client+"/health", &h); err != nil || h.Health != "true" {
				return fmt.Errorf("health %q: %v", h.Health, err)
			}
			return nil
		})
		if err == nil {
			var v struct{ Etcdserver string }
			_ = getJSON(ctx, client+"/version", &v)
			return &peerProc{Addr: strings.TrimPrefix(client, "http://"), Version: v.Etcdserver, proc: p}, nil
		}
		p.stop()
		if attempt == 2 || !strings.Contains(err.Error(), "address already in use") {
			return nil, err
		}
	}
}

func getJSON(ctx context.Context, url string, v any) error {
	ctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}

// dialEtcd returns a connected etcd client that counts its requests: every
// unary call and every message sent on a stream (a watch's creation, a
// lease keep-alive).
func dialEtcd(ctx context.Context, addr string, sent *atomic.Int64) (any, func(), error) {
	unary := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
		invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		sent.Add(1)
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	stream := func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string,
		streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		s, err := streamer(ctx, desc, cc, method, opts...)
		if err != nil {
			return nil, err
		}
		return countedStream{s, sent}, nil
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{addr},
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
		DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(unary), grpc.WithChainStreamInterceptor(stream)},
	})
	if err != nil {
		return nil, nil, err
	}
	if _, err := cli.Get(ctx, "bench-warm-up"); err != nil {
		_ = cli.Close()
		return nil, nil, err
	}
	return cli, func() { _ = cli.Close() }, nil
}

type countedStream struct {
	grpc.ClientStream
	sent *atomic.Int64
}

func (s countedStream) SendMsg(m any) error {
	s.sent.Add(1)
	return s.ClientStream.SendMsg(m)
}
