package scripts

import (
	"fmt"
	"strings"
)

// ManifestLine describes s as scripts/MANIFEST lists it: its name, the
// SHA-1 of what is sent (what EVALSHA names it by, and SCRIPT EXISTS
// looks for), its code lines, the functions it defines per call, and
// the fragments it is made of, in order ("-" for none). It lives here,
// not in the manifest's test, so that the CLI's "latchkey lua" prints
// the very lines the manifest holds, and the two cannot drift apart.
func ManifestLine(s *Script) string {
	frags := strings.Join(s.Fragments(), ",")
	if frags == "" {
		frags = "-"
	}
	return fmt.Sprintf("%-20s %s %4d %2d %s", s.Name(), s.Hash(), strings.Count(s.Source(), "\n"), s.Functions(), frags)
}
