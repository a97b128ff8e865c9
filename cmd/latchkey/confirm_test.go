package main

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// answers are what a person may type at the prompt, and the exit status
// each leads to (0: approved).
var answers = map[string]int{
	"y\n":   0,
	"YES\n": 0,
	"n\n":   exitNotConfirmed,
	"\n":    exitNotConfirmed,
	"":      exitNotConfirmed, // end of input
}

// An answer other than yes at the prompt is the not-confirmed status;
// -yes asks nothing.
func TestApprove(t *testing.T) {
	for answer, want := range answers {
		e := &env{stdin: strings.NewReader(answer), stderr: io.Discard}
		err := approve(e, false, "go? ")
		var se *statusError
		switch {
		case want == 0 && err != nil:
			t.Errorf("answer %q: %v, want approved", answer, err)
		case want != 0 && (!errors.As(err, &se) || se.code != want):
			t.Errorf("answer %q: %v, want exit status %d", answer, err, want)
		}
	}
	if err := approve(&env{stdin: strings.NewReader("")}, true, "go? "); err != nil {
		t.Errorf("-yes: %v", err)
	}
}
