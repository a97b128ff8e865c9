package chaos

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// ambiguity is how long after an Unknown operation returned its request may
// still be applied: it may sit in a proxy's latency fault or a socket
// buffer. Porcupine lets it take effect anywhere in its interval.
const ambiguity = time.Second

// checkTokens checks that fencing tokens strictly increase: every
// acquisition of a name returned a token higher than those of every
// acquisition of the name that returned before it was called, and no two
// acquisitions got the same token.
func checkTokens(r *Report, ops []Op) {
	for name, ops := range byName(ops) {
		var acq []Op
		for _, op := range ops {
			if op.Kind == Acquire && op.Outcome == OK && op.Token != 0 {
				acq = append(acq, op)
			}
		}
		byReturn := slices.Clone(acq)
		slices.SortFunc(byReturn, func(a, b Op) int { return cmp64(a.Return, b.Return) })
		slices.SortFunc(acq, func(a, b Op) int { return cmp64(a.Call, b.Call) })
		owner := make(map[int64]Op, len(acq))
		var (
			j       int
			highest Op
		)
		for _, op := range acq {
			if prev, ok := owner[op.Token]; ok {
				r.Violation("%s: token %d granted twice, to client %d and client %d", name, op.Token, prev.Client, op.Client)
			}
			owner[op.Token] = op
			for ; j < len(byReturn) && byReturn[j].Return < op.Call; j++ {
				if byReturn[j].Token > highest.Token {
					highest = byReturn[j]
				}
			}
			if op.Token <= highest.Token {
				r.Violation("%s: client %d got token %d, not above token %d that client %d got %v before",
					name, op.Client, op.Token, highest.Token, highest.Client, time.Duration(op.Call-highest.Return))
			}
		}
	}
}

func cmp64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// checkLinearizable checks ops, name by name, against model with
// porcupine, allowing each name at most timeout. An illegal history is a
// violation; one that porcupine could not decide in time is logged.
func checkLinearizable(t testing.TB, r *Report, what string, model porcupine.NondeterministicModel, ops []Op, timeout time.Duration) {
	t.Helper()
	m := model.ToModel()
	for name, ops := range byName(ops) {
		history := make([]porcupine.Operation, len(ops))
		for i, op := range ops {
			ret := op.Return
			if op.Outcome == Unknown {
				ret = min(ret+int64(ambiguity), math.MaxInt64)
			}
			history[i] = porcupine.Operation{
				ClientId: op.Client,
				Input:    input{op.Kind, op.Client, op.N},
				Call:     op.Call,
				Output:   output{op.Outcome, op.Token},
				Return:   ret,
			}
		}
		start := time.Now()
		res := porcupine.CheckOperationsTimeout(m, history, timeout)
		switch res {
		case porcupine.Illegal:
			r.Violation("%s %s: porcupine: the history of %d operations is not linearizable%s", what, name, len(ops), visualize(m, history, name, timeout))
		case porcupine.Unknown:
			t.Logf("%s %s: porcupine could not decide %d operations within %v", what, name, len(ops), timeout)
		default:
			t.Logf("%s %s: porcupine: %d operations linearizable (%v)", what, name, len(ops), time.Since(start).Round(time.Millisecond))
		}
	}
}

// visualize writes porcupine's picture of an illegal history (its longest
// linearizable prefixes and where they stop) to an HTML file in the
// temporary directory, and returns a note naming it.
func visualize(m porcupine.Model, history []porcupine.Operation, name string, timeout time.Duration) string {
	_, info := porcupine.CheckOperationsVerbose(m, history, timeout)
	path := filepath.Join(os.TempDir(), "chaos-"+strings.NewReplacer(":", "_", "/", "_").Replace(name)+".html")
	if err := porcupine.VisualizePath(m, info, path); err != nil {
		return " (no visualization: " + err.Error() + ")"
	}
	return " (see " + path + ")"
}
