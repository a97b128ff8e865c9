package scripts

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// A script's header names its KEYS and ARGV; its builder names the same,
// one at a time, in the order it writes them. The header is the Lua's
// word, the builder the Go's: this test holds them together, so that a
// position can never drift.

// header is what a script's header says of its KEYS and ARGV: the label
// of each position, from 1; "" where the header does not name it.
type header struct {
	keys, args []string
	// variadic: a position from which items repeat (KEYS[i], ARGV[8..]).
	keysFrom, argsFrom int
}

// entryRE finds one "KEYS[...]" or "ARGV[...]" of a header and its text.
var entryRE = regexp.MustCompile(`(KEYS|ARGV)\[([0-9i+ -]+)(?:\.\.([0-9]*))?\]\s*`)

// parseHeader reads the header of the script file src.
func parseHeader(src string) header {
	var text []string
	for line := range strings.Lines(src) {
		if !strings.HasPrefix(line, "--") {
			break
		}
		t := strings.TrimSpace(strings.TrimPrefix(line, "--"))
		if entryRE.MatchString(t) && strings.Index(t, entryRE.FindString(t)) == 0 || len(text) == 0 {
			text = append(text, t)
		} else if strings.HasPrefix(line, "--  ") {
			text[len(text)-1] += " " + t // a continuation line
		} else {
			text = append(text, "")
		}
	}
	var h header
	for _, t := range text {
		locs := entryRE.FindAllStringSubmatchIndex(t, -1)
		if len(locs) == 0 || locs[0][0] != 0 {
			continue
		}
		for i, loc := range locs {
			end := len(t)
			if i+1 < len(locs) {
				end = locs[i+1][0]
			}
			kind, from, to := t[loc[2]:loc[3]], t[loc[4]:loc[5]], ""
			if loc[6] >= 0 {
				to = t[loc[6]:loc[7]]
			}
			h.add(kind, from, to, loc[6] >= 0 && to == "", strings.TrimRight(strings.TrimSpace(t[loc[1]:end]), ","))
		}
	}
	return h
}

// add notes the labels of positions from..to of kind; open says that
// the range has no end (ARGV[8..]): items repeat from there.
func (h *header) add(kind, from, to string, open bool, text string) {
	list, variadic := &h.keys, &h.keysFrom
	if kind == "ARGV" {
		list, variadic = &h.args, &h.argsFrom
	}
	a, err := strconv.Atoi(strings.TrimSpace(from))
	if err != nil || open { // KEYS[i], ARGV[i+1], ARGV[8..]: items repeat
		if err == nil {
			*variadic = a
		} else {
			*variadic = len(*list) + 1
		}
		return
	}
	b, labels := a, []string{text}
	if to != "" {
		b, _ = strconv.Atoi(to)
		labels = splitLabels(text)
	}
	for len(*list) < b {
		*list = append(*list, "")
	}
	for i := a; i <= b; i++ {
		if j := i - a; j < len(labels) {
			(*list)[i-1] = labels[j]
		}
	}
}

// splitLabels splits the text of a range, "the mutex's (see ...): lock
// hash, fencing counter, ..." or "now, PUBLISH or SPUBLISH, ... (see
// inputs.lua)", into one label per position.
func splitLabels(text string) []string {
	if i := strings.Index(text, "):"); i >= 0 {
		text = text[i+2:]
	}
	if i := strings.LastIndex(text, " (see "); i >= 0 {
		text = text[:i]
	}
	var out []string
	for _, l := range strings.Split(text, ",") {
		out = append(out, strings.TrimSpace(l))
	}
	return out
}

// norm folds a label for comparison.
func norm(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

// checkAgainstHeader fails t if r's labels are not the header's, in order.
func checkAgainstHeader(t *testing.T, name string, r Request) {
	t.Helper()
	src, err := files.ReadFile(r.Script.Name() + ".lua")
	if err != nil {
		t.Fatal(err)
	}
	h := parseHeader(string(src))
	keyLabels, argLabels := r.Labels()
	check := func(kind string, got, want []string, from int) {
		t.Helper()
		if from == 0 && len(got) != len(want) {
			t.Errorf("%s: %s writes %d %s, its header names %d: %q", name, r.Script.Name(), len(got), kind, len(want), want)
		}
		for i, g := range got {
			if from > 0 && i+1 >= from {
				break
			}
			if i >= len(want) {
				break
			}
			if !strings.HasPrefix(norm(want[i]), norm(g)) {
				t.Errorf("%s: %s[%d] is %q in the builder, %q in %s's header", name, kind, i+1, g, want[i], r.Script.Name())
			}
		}
	}
	check("KEYS", keyLabels, h.keys, h.keysFrom)
	check("ARGV", argLabels, h.args, h.argsFrom)
}

// samples holds a request of every builder, by the builder's name: each
// family of scripts registers its own (req_<family>_test.go).
var samples = map[string]func() Request{}

// sample registers the builder called name, whose request f makes.
func sample(name string, f func() Request) { samples[name] = f }

func TestBuilders_matchHeaders(t *testing.T) {
	Checking(true)
	defer Checking(false)
	covered := map[string]bool{}
	for name, f := range samples {
		r := f()
		covered[r.Script.Name()] = true
		checkAgainstHeader(t, name, r)
	}
	for _, s := range All() {
		if !covered[s.Name()] {
			t.Errorf("%s has no builder", s.Name())
		}
	}
}
