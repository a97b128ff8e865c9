package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/latchkey/latchkey/internal/keys"
)

// runVersion prints the module version the binary was built from, "(devel)"
// when the build does not say (go run, go build without VCS stamping),
// with the Go release and the go-redis version it was built with.
func runVersion(_ context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	help(fs, "version", versionHelp)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errFlags
	}
	if fs.NArg() != 0 {
		return usagef("takes no arguments")
	}
	version, redisVersion := keys.Version(), "unknown"
	if version == "" {
		version = "(devel)"
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if d.Path == "github.com/redis/go-redis/v9" {
				redisVersion = d.Version
				if d.Replace != nil {
					redisVersion = d.Replace.Version
				}
			}
		}
	}
	_, err := fmt.Fprintf(e.stdout, "latchkey %s, %s, go-redis %s\n", version, runtime.Version(), redisVersion)
	return err
}
