package latchkey

import (
	"context"

	"github.com/latchkey/latchkey/internal/owner"
)

// WithOwner returns a copy of ctx that marks its call chain as one owner, as
// a Java thread is one owner in Redisson. Locks taken with that ctx (or one
// derived from it) are reentrant: a second Lock increments the hold count
// instead of waiting, and each Lock needs its own Unlock with the same
// owner. Without an owner in ctx, a lock is like a shared sync.Mutex: a
// second Lock waits, and any goroutine may Unlock.
//
// [context.WithoutCancel] keeps the owner, so
//
//	defer m.Unlock(context.WithoutCancel(ctx))
//
// unlocks even when ctx was cancelled.
func WithOwner(ctx context.Context) context.Context {
	return owner.NewContext(ctx, owner.New())
}

// WithOwnerID returns a copy of ctx carrying the owner id, typically one
// that another goroutine or process obtained with [OwnerID], so that it can
// unlock or re-enter on that owner's behalf (Redisson's unlock by thread
// id). The id has Redisson's shape, <uuid>:<n>, and is written to Redis as
// is. WithOwnerID panics if id is empty.
func WithOwnerID(ctx context.Context, id string) context.Context {
	if id == "" {
		panic("latchkey: WithOwnerID: empty owner id")
	}
	return owner.NewContext(ctx, id)
}

// OwnerID returns the owner id carried by ctx, or "" if it carries none.
func OwnerID(ctx context.Context) string {
	id, _ := owner.FromContext(ctx)
	return id
}
