package keys

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"
)

// The process record: each latchkey process keeps, through each go-redis
// client it uses, a record of itself beside the keys it writes (its host
// name, pid, program, start and latchkey version) under the key
// latchkey_process:{uuid}, uuid being the first half of every owner id the
// process makes (see internal/owner). A tool that finds a latchkey owner
// id on a lock or in a queue reads it there to say which process holds or
// waits (the CLI's inspect does); Redisson's owners have no record. The
// runtime (internal/rt) writes it in the background, with a TTL of
// ProcessTTL, every ProcessRefresh until latchkey.Close.

// ProcessRecord returns the key of the record a latchkey process keeps of
// itself (see internal/rt), latchkey_process:{uuid}: uuid is the
// process's UUID, the first half of every owner id it makes (see
// internal/owner).
func ProcessRecord(uuid string) string { return Prefix(processPrefix, uuid) }

// ProcessRecordPattern matches the key of every process record, as an ACL
// key pattern does (~latchkey_process:*).
const ProcessRecordPattern = processPrefix + ":*"

const processPrefix = "latchkey_process"

// ProcessTTL is how long a record lives after its last write: how long it may
// outlive its process. ProcessRefresh is how often a client rewrites it; a TTL
// of five refreshes rides out four lost writes (a failover, a restart)
// before the record lapses, and the next write after that restores it.
// One SET a minute per client is a sixth of what the watchdog sends for
// one lock it keeps (a renewal every 10s).
const (
	ProcessTTL     = 5 * time.Minute
	ProcessRefresh = time.Minute
)

// A Process is what a latchkey process writes of itself in its record. Its JSON is the record's
// value in Redis.
type Process struct {
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
func Self() Process {
	host, _ := os.Hostname()
	program := ""
	if len(os.Args) > 0 {
		program = filepath.Base(os.Args[0])
	}
	return Process{Host: host, PID: os.Getpid(), Program: program, Started: loaded.UTC(), Version: Version()}
}

// SelfJSON is this process's record as JSON, made once.
var SelfJSON = sync.OnceValue(func() string {
	b, err := json.Marshal(Self())
	if err != nil {
		panic(err) // a Process always marshals
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
