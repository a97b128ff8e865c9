package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"slices"
)

// runInspect shows, per name, its kind and what is there.
func runInspect(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("inspect", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print one JSON object per name")
	kind := fs.String("kind", "", "the kind to read NAME as, instead of detecting it: "+kindList)
	lease := leaseFlag(fs)
	help(fs, "inspect [flags] NAME...", inspectHelp)
	names, err := e.parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(names) == 0 {
		return usagef("want at least one NAME")
	}
	if err := checkKind(*kind); err != nil {
		return err
	}
	c, err := e.dial(ctx)
	if err != nil {
		return err
	}
	defer c.client.Close()
	c.lease = *lease
	ctx, cancel := e.withTimeout(ctx)
	defer cancel()
	reqs := make([]request, len(names))
	for i, name := range names {
		reqs[i] = request{name, *kind}
	}
	sts, errs := readMany(ctx, c, reqs, nil) // every name in the same few round trips
	enc := json.NewEncoder(e.stdout)
	nothing := false // a name with nothing under it: exit status 3
	for i, st := range sts {
		if errs[i] != nil {
			return errs[i]
		}
		if st.Kind == kindNone {
			nothing = true
		}
		sortState(st)
		if *asJSON {
			if err := enc.Encode(st); err != nil {
				return err
			}
			continue
		}
		if i > 0 {
			fmt.Fprintln(e.stdout)
		}
		if err := printState(e.stdout, st, *lease); err != nil {
			return err
		}
	}
	if nothing {
		return &statusError{code: exitNothing} // stdout says which
	}
	return nil
}

// sortState orders the holders (a hash has no order) so that output is
// stable: the writer first, then by owner.
func sortState(st *State) {
	slices.SortFunc(st.Holders, func(a, b Holder) int {
		if a.Mode != b.Mode {
			if a.Mode == "write" {
				return -1
			}
			if b.Mode == "write" {
				return 1
			}
		}
		switch {
		case a.Owner < b.Owner:
			return -1
		case a.Owner > b.Owner:
			return 1
		}
		return 0
	})
}
