// Package fault sorts the errors a Redis call can end with into those that
// a retry may cure (a failover, a restart, a dropped connection) and those
// that it cannot.
package fault

import (
	"context"
	"errors"
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

// WrongType reports whether Redis refused a command because the key holds
// another type of value: another primitive, or anything else, uses the name.
func WrongType(err error) bool {
	var rerr redis.Error
	return errors.As(err, &rerr) && strings.Contains(rerr.Error(), "WRONGTYPE")
}
