package scripts

import (
	"regexp"
	"strings"
)

// What is sent to Redis is the composed script without its comments and
// blank lines, and without the functions of its fragments that nothing it
// sends calls: each function a script defines costs the server a closure
// on every call, whatever the call then runs. The fragments are written
// so that this can be done by lines: a function a fragment defines starts
// with "local function <name>(" at the start of a line and ends with the
// first line that is "end" alone; a comment is a line's rest after "--"
// outside a string. TestAll_compiles holds every script as sent against
// a Lua parser, and fails on a name that nothing defines.

// funcRE matches the first line of a function a fragment or a script
// defines at its top level.
var funcRE = regexp.MustCompile(`^local function ([A-Za-z_][A-Za-z0-9_]*)\(`)

// nameRE matches the names a line mentions.
var nameRE = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)

// compact returns src, a composed script, as it is sent: without
// comments, blank lines and the functions nothing calls, and how many
// functions it defines.
func compact(src string) (string, int) {
	lines := stripComments(src)
	// The top-level functions, by name: their lines, and the names they
	// mention.
	type fn struct {
		from, to int // lines[from:to]
		uses     map[string]bool
	}
	fns := map[string]*fn{}
	var order []string
	inside := make([]bool, len(lines))
	for i := 0; i < len(lines); i++ {
		m := funcRE.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		f := &fn{from: i, uses: map[string]bool{}}
		for i++; i < len(lines) && lines[i] != "end"; i++ {
		}
		f.to = min(i+1, len(lines))
		for j := f.from; j < f.to; j++ {
			inside[j] = true
			if j > f.from {
				mention(f.uses, lines[j])
			}
		}
		fns[m[1]] = f
		order = append(order, m[1])
	}
	// What the code outside the functions calls, and what those call.
	reached := map[string]bool{}
	for j, l := range lines {
		if !inside[j] {
			mention(reached, l)
		}
	}
	for changed := true; changed; {
		changed = false
		for name, f := range fns {
			if !reached[name] {
				continue
			}
			for u := range f.uses {
				if fns[u] != nil && !reached[u] {
					reached[u], changed = true, true
				}
			}
		}
	}
	drop := make([]bool, len(lines))
	kept := 0
	for _, name := range order {
		if f := fns[name]; reached[name] {
			kept++
		} else {
			for j := f.from; j < f.to; j++ {
				drop[j] = true
			}
		}
	}
	var b strings.Builder
	for j, l := range lines {
		if !drop[j] {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String(), kept
}

// mention adds the names line mentions to set.
func mention(set map[string]bool, line string) {
	for _, n := range nameRE.FindAllString(line, -1) {
		set[n] = true
	}
}

// stripComments returns src's lines without their comments and without
// the lines left blank, right-trimmed.
func stripComments(src string) []string {
	var out []string
	for line := range strings.Lines(src) {
		line = strings.TrimRight(cutComment(line), " \t\r\n")
		if strings.TrimSpace(line) != "" {
			out = append(out, line)
		}
	}
	return out
}

// cutComment returns line up to its "--" outside a string.
func cutComment(line string) string {
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0 && c == '\\':
			i++
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
		case c == '\'' || c == '"':
			quote = c
		case c == '-' && i+1 < len(line) && line[i+1] == '-':
			return line[:i]
		}
	}
	return line
}
