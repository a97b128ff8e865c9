// Package owner makes and carries lock owner ids. An owner id has Redisson's
// shape, <uuid>:<n>: one random UUID per process and a decimal counter.
//
// The UUID is a version 8 UUID (RFC 9562's custom version), random but for
// its version and variant bits, where Redisson's are version 4: a script
// that finds a lock held can tell a latchkey holder, whose release grants
// the lock to the next latchkey waiter, from a Redisson one, whose release
// only publishes (see Latchkey).
package owner

import (
	"context"
	"strconv"
	"sync/atomic"

	"github.com/google/uuid"
)

var (
	process = newProcess()
	counter atomic.Int64
)

func newProcess() string {
	u := uuid.New()
	u[6] = u[6]&0x0f | 0x80 // version 8
	return u.String()
}

// Latchkey reports whether id has the shape of an owner id made by New:
// the version digit of its UUID is 8. Scripts test the same (the
// fifteenth character is '8'). An id given by a user may have any shape,
// and then counts as Redisson's.
func Latchkey(id string) bool { return len(id) > 36 && id[14] == '8' && id[36] == ':' }

// Process returns this process's UUID, the first half of every owner id it makes.
func Process() string { return process }

// New returns a fresh owner id, unique within and across processes.
func New() string {
	var b [64]byte // a UUID, ':' and an int64 fit: one allocation, the id's
	id := append(append(b[:0], process...), ':')
	return string(strconv.AppendInt(id, counter.Add(1), 10))
}

type ctxKey struct{}

// NewContext returns a copy of ctx carrying owner id.
func NewContext(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, ctxKey{}, id)
}

// FromContext returns the owner id carried by ctx, if any.
func FromContext(ctx context.Context) (string, bool) {
	id, ok := ctx.Value(ctxKey{}).(string)
	return id, ok && id != ""
}
