package latchkey_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/latchkey/latchkey/internal/scripts"
)

// calledRE finds the commands a script names to redis.call.
var calledRE = regexp.MustCompile(`redis\.call\('([a-zA-Z]+)'`)

// Every command a script names is one the documented least-privilege user
// may run: the suite under that user (TestConformance/acl) runs only the
// branches its tests reach, and a branch it misses would fail for the
// users who followed the documentation.
func TestACL_coversScriptCommands(t *testing.T) {
	acl := documentedACL(t, 0, "u", "p", "app:")
	allowed := func(cmd string) bool {
		return slices.ContainsFunc(acl, func(a any) bool {
			w, _ := a.(string)
			return w == "+"+cmd || strings.HasPrefix(w, "+"+cmd+"|")
		})
	}
	for _, s := range scripts.All() {
		for _, m := range calledRE.FindAllStringSubmatch(s.Source(), -1) {
			if cmd := strings.ToLower(m[1]); !allowed(cmd) {
				t.Errorf("%s calls %s, which doc.go's ACL does not grant", s.Name(), cmd)
			}
		}
	}
}
