package hold

import (
	"context"
	"sync"
)

// Locker adapts a pair of ctx-aware lock and unlock functions to
// sync.Locker, with a background context; it panics on any error, prefixed
// with pkg, since sync.Locker cannot return one.
func Locker(pkg string, lock, unlock func(context.Context) error) sync.Locker {
	return locker{pkg, lock, unlock}
}

type locker struct {
	pkg          string
	lock, unlock func(context.Context) error
}

func (l locker) Lock() {
	if err := l.lock(context.Background()); err != nil {
		panic(l.pkg + ": Locker: " + err.Error())
	}
}

func (l locker) Unlock() {
	if err := l.unlock(context.Background()); err != nil {
		panic(l.pkg + ": Locker: " + err.Error())
	}
}
