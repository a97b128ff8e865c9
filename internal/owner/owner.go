// Package owner makes and carries lock owner ids. An owner id has Redisson's
// shape, <uuid>:<n>: one random UUID per process and a decimal counter.
package owner

import (
	"context"
	"strconv"
	"sync/atomic"

	"github.com/google/uuid"
)

var (
	process = uuid.NewString()
	counter atomic.Int64
)

// Process returns this process's UUID, the first half of every owner id it makes.
func Process() string { return process }

// New returns a fresh owner id, unique within and across processes.
func New() string {
	return process + ":" + strconv.FormatInt(counter.Add(1), 10)
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
