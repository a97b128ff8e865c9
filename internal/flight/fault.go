package flight

// A request's fate: the errors a Redis call can end with, sorted into
// those that a retry may cure (a failover, a restart, a dropped
// connection) and those that it cannot, and whether a failed request can
// have been applied.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/redis/go-redis/v9"
)

// transientPrefixes are the Redis error replies that describe a passing
// state of the server or the cluster, not a mistake of the request.
var transientPrefixes = []string{
	"LOADING",     // a restarted server is still loading its data
	"READONLY",    // a failover demoted the master we wrote to
	"MASTERDOWN",  // a replica lost its master
	"CLUSTERDOWN", // the cluster is electing a new master
	"TRYAGAIN",    // a slot is migrating
	"MOVED",       // the slot map changed
	"ASK",
	"BUSY",       // another script runs too long
	"NOREPLICAS", // min-replicas-to-write not met
	"ERR max number of clients reached",
}

// Transient reports whether err may pass if the call is made again after a
// short pause: a network error, a timeout of one request (not of the
// caller's context), or a reply that says the server or the cluster is
// changing. Context errors are not transient: they are the caller's
// decision.
func Transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if Network(err) {
		return true
	}
	var rerr redis.Error
	if errors.As(err, &rerr) {
		msg := rerr.Error()
		for _, p := range transientPrefixes {
			if strings.HasPrefix(msg, p) {
				return true
			}
		}
	}
	return false
}

// Network reports whether err comes from the connection rather than from
// Redis: the server could not be reached, or the connection broke or timed
// out before a reply. Such an error leaves the outcome of a write unknown.
func Network(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed) {
		return true
	}
	var nerr net.Error
	if errors.As(err, &nerr) {
		return true
	}
	var operr *net.OpError
	return errors.As(err, &operr) || strings.Contains(err.Error(), "connection pool timeout")
}

// NeverSent reports whether a request on client that failed with err
// provably never reached a server, so that nothing it asked for can have
// been applied: its connection could not be made (a dial error, a refused
// connection, the pool's wait for a connection timed out), and client makes
// no retries of its own. With retries (go-redis's MaxRetries, 3 unless
// set), the error is that of the last try only: an earlier try may have
// been sent and its reply lost, so nothing is proved.
func NeverSent(client redis.UniversalClient, err error) bool {
	if err == nil || retries(client) {
		return false
	}
	var operr *net.OpError
	return errors.As(err, &operr) && operr.Op == "dial" || strings.Contains(err.Error(), "connection pool timeout")
}

// retries reports whether client may send a request more than once.
func retries(client redis.UniversalClient) bool {
	switch c := client.(type) {
	case *redis.Client:
		return c.Options().MaxRetries > 0
	case *redis.ClusterClient:
		o := c.Options()
		return o.MaxRetries > 0 || o.MaxRedirects > 0
	}
	return true
}

// Explain returns err, from a request on client, with what it may mean
// when that is not plain: a connection that the server closed before any
// reply, on a client without TLS, is what a server that accepts only TLS
// (a tls-port and port 0) does to a plaintext client, which otherwise
// learns nothing but EOF, or that its ctx ran out while it retried.
func Explain(client redis.UniversalClient, err error) error {
	if !closedUnanswered(err) || usesTLS(client) {
		return err
	}
	return fmt.Errorf("%w: the server closed the connection without a reply; if it accepts only TLS, set the client's TLSConfig", err)
}

// closedUnanswered reports whether err says that the server closed the
// connection, or reset it, instead of answering.
func closedUnanswered(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)
}

// usesTLS reports whether client dials with TLS, as far as its options say.
func usesTLS(client redis.UniversalClient) bool {
	switch c := client.(type) {
	case *redis.Client:
		return c.Options().TLSConfig != nil
	case *redis.ClusterClient:
		return c.Options().TLSConfig != nil
	}
	return false
}
