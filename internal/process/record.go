// Package process keeps, through each go-redis client that latchkey uses,
// a record of this process beside the keys it writes: its host name, pid,
// program, start and latchkey version, under the key
// latchkey_process:{uuid}, uuid being the first half of every owner id the
// process makes (see internal/owner). A tool that finds a latchkey owner
// id on a lock or in a queue reads it there to say which process holds or
// waits (the CLI's inspect does); Redisson's owners have no record.
//
// The record is written in the background, never on a call's path: the
// end of a client's first write (internal/scripts calls Start after each)
// fires the first write, and a timer rewrites it every Refresh, with a TTL
// of TTL, until latchkey.Close. See writer.go.
package process

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"
)

// A Record is what a process writes of itself. Its JSON is the record's
// value in Redis.
type Record struct {
	Host    string    `json:"host"`              // os.Hostname, "" if unknown
	PID     int       `json:"pid"`               // os.Getpid
	Program string    `json:"program"`           // the base name of os.Args[0]
	Started time.Time `json:"started"`           // when latchkey was loaded: the process's start, near enough
	Version string    `json:"version,omitempty"` // latchkey's module version, if the build says
}

// loaded is when this package was initialised, which stands for the
// process's start.
var loaded = time.Now()

// Self returns this process's record.
func Self() Record {
	host, _ := os.Hostname()
	program := ""
	if len(os.Args) > 0 {
		program = filepath.Base(os.Args[0])
	}
	return Record{Host: host, PID: os.Getpid(), Program: program, Started: loaded.UTC(), Version: Version()}
}

// value is this process's record as JSON, made once.
var value = sync.OnceValue(func() string {
	b, err := json.Marshal(Self())
	if err != nil {
		panic(err) // a Record always marshals
	}
	return string(b)
})

// modulePath is latchkey's module path, as build information names it.
const modulePath = "github.com/latchkey/latchkey"

// Version returns the version of the latchkey module this binary was built
// with, as its build information says: that of the main module when it is
// latchkey (the CLI), else that of the dependency (a program that uses the
// library), following a replace. "" when the build does not say (go run,
// go test, a build without module information, a replace by a directory).
func Version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	if info.Main.Path == modulePath {
		return known(info.Main.Version)
	}
	for _, d := range info.Deps {
		if d.Path != modulePath {
			continue
		}
		if d.Replace != nil {
			return known(d.Replace.Version)
		}
		return known(d.Version)
	}
	return ""
}

// known returns v, or "" for the placeholder of an unstamped build.
func known(v string) string {
	if v == "(devel)" {
		return ""
	}
	return v
}
