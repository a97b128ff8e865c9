package chaos

import (
	"context"
	"flag"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/redis/go-redis/v9"
)

var (
	seedFlag  = flag.Uint64("chaos.seed", envUint("CHAOS_SEED", 1), "seed of every random choice of the suite (also CHAOS_SEED)")
	scaleFlag = flag.Float64("chaos.scale", envFloat("CHAOS_SCALE", 1), "multiplies the duration of the soak tests (also CHAOS_SCALE)")
)

// TestMain runs the suite and prints its summary line last.
func TestMain(m *testing.M) {
	flag.Parse()
	// go-redis logs every failed dial and lost connection: under fault
	// injection that is thousands of lines about faults the suite made.
	redis.SetLogger(quiet{})
	code := m.Run()
	if !redistest.IsChild() {
		fmt.Println(totals.summary())
	}
	os.Exit(code)
}

// quiet is a go-redis logger that logs nothing.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// rng returns the random source of a test: the suite's seed mixed with the
// test's name, so that a test draws the same choices whichever tests ran
// before it.
func rng(t testing.TB) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(t.Name()))
	return rand.New(rand.NewPCG(*seedFlag, h.Sum64()))
}

// soak returns d scaled by -chaos.scale, and shrunk to a tenth (at least
// a second) under -short.
func soak(d time.Duration) time.Duration {
	d = time.Duration(float64(d) * *scaleFlag)
	if testing.Short() {
		d = max(d/10, time.Second)
	}
	return d
}

func envUint(name string, def uint64) uint64 {
	if v, err := strconv.ParseUint(os.Getenv(name), 10, 64); err == nil {
		return v
	}
	return def
}

func envFloat(name string, def float64) float64 {
	if v, err := strconv.ParseFloat(os.Getenv(name), 64); err == nil && v > 0 {
		return v
	}
	return def
}

// newRand returns a random source for worker i drawn from rnd.
func newRand(rnd *rand.Rand, i int) *rand.Rand {
	return rand.New(rand.NewPCG(rnd.Uint64(), uint64(i)))
}
