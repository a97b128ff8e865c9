package latchkey_test

import (
	"testing"

	"github.com/latchkey/latchkey"
	"github.com/redis/go-redis/v9"
)

// closeLater closes c, and the latchkey resources kept for it, when t ends.
func closeLater[C redis.UniversalClient](t *testing.T, c C) C {
	t.Cleanup(func() {
		_ = latchkey.Close(c)
		_ = c.Close()
	})
	return c
}
