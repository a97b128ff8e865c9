package rt_test

import (
	"testing"

	"github.com/latchkey/latchkey/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }
