package latchkey_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/mutex"
	"github.com/redis/go-redis/v9"
)

// tlsPort starts a redis-server that also serves TLS, with a certificate
// made for the test, and returns its TLS port. (The server's plain port
// only tells the test that it is up.)
func tlsPort(t *testing.T) string {
	t.Helper()
	redistest.Require(t)
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	for f, b := range map[string]*pem.Block{certFile: {Type: "CERTIFICATE", Bytes: der}, keyFile: {Type: "EC PRIVATE KEY", Bytes: keyDER}} {
		if err := os.WriteFile(f, pem.EncodeToMemory(b), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	port := strings.TrimPrefix(deadAddr(t), "127.0.0.1:")
	redistest.StartServer(t, "--tls-port", port, "--tls-cert-file", certFile, "--tls-key-file", keyFile,
		"--tls-auth-clients", "no")
	return "127.0.0.1:" + port
}

// A client without TLS on a port that serves only TLS is told what may be
// wrong: the server closes every connection unanswered (EOF), which a
// blocking call rides out until its deadline, or its ride-out, and which
// a single attempt reports at once.
func TestContract_plaintextOnTLSPort(t *testing.T) {
	addr := tlsPort(t)
	c := closeLater(t, redis.NewClient(&redis.Options{Addr: addr}))
	says := func(t *testing.T, what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), "accepts only TLS") {
			t.Errorf("%s = %v, want an error that says the server may want TLS", what, err)
		}
	}
	// go-redis retries a request that found its connection closed, with
	// backoff, for up to about a second: the deadline leaves room for a
	// few of those, as the 3s of a default client's timeouts do. The calls
	// run side by side.
	const d = 3 * time.Second
	type result struct {
		took time.Duration
		err  error
	}
	results := make([]chan result, len(blocking))
	for i, b := range blocking {
		results[i] = make(chan result, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), d)
			defer cancel()
			start := time.Now()
			err := b.call(ctx, c, "plaintext-"+b.name)
			results[i] <- result{time.Since(start), err}
		}()
	}
	for i, b := range blocking {
		r := <-results[i]
		if r.took > d+pastDeadline {
			t.Errorf("%s returned %v after the start, %v past its deadline", b.name, r.took, r.took-d)
		}
		// MultiLock and RedLock take a member's or the quorum's error as
		// final; the others ride it out.
		final := strings.HasPrefix(b.name, "multilock") || strings.HasPrefix(b.name, "redlock")
		if !final && !errors.Is(r.err, context.DeadlineExceeded) {
			t.Errorf("%s = %v, want an error matching context.DeadlineExceeded", b.name, r.err)
		}
		says(t, b.name, r.err)
	}
	ctx := context.Background()
	_, err := mutex.New(c, "tls-try").TryLock(ctx, 0)
	says(t, "a single attempt", err)

	short := closeLater(t, redis.NewClient(&redis.Options{Addr: addr}))
	latchkey.SetRideOut(short, 300*time.Millisecond)
	err = mutex.New(short, "tls-ride-out").Lock(ctx)
	says(t, "a Lock that outlasted its ride-out", err)
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		t.Errorf("Lock without a deadline ended with %v, want the outage's error", err)
	}
}
