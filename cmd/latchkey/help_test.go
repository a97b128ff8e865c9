package main

import (
	"strings"
	"testing"
)

// Every command's -h says what it takes, what it changes, with an
// example, and exits 0. Before, it listed the flags alone.
func TestHelp(t *testing.T) {
	c := cli{bin: build(t)}
	for _, name := range append(order, "give") {
		_, errOut, code := c.run(t, name, "-h")
		if code != 0 || !strings.Contains(errOut, "Usage: latchkey [connection flags] ") || !strings.Contains(errOut, "Example:\n  latchkey ") {
			t.Errorf("latchkey %s -h: exit %d:\n%s", name, code, errOut)
		}
		switch name {
		case "inspect", "ls", "watch":
			if !strings.Contains(errOut, "changes nothing") {
				t.Errorf("latchkey %s -h does not say that it changes nothing:\n%s", name, errOut)
			}
		case "lua":
			if !strings.Contains(errOut, "changes nothing") || strings.Contains(errOut, "Flags") {
				t.Errorf("latchkey lua -h:\n%s", errOut)
			}
		case "version":
			if !strings.Contains(errOut, "reads nothing") || strings.Contains(errOut, "Flags") {
				t.Errorf("latchkey version -h:\n%s", errOut)
			}
		}
	}
}
