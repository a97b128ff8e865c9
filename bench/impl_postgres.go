package main

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// postgresPeer is a throwaway PostgreSQL server: initdb and postgres from
// PATH or from Debian's postgresql package (/usr/lib/postgresql/*/bin).
var postgresPeer = &Peer{Name: "postgres", Package: "postgresql", Start: startPostgres, Dial: dialPostgres}

// The statements of a pgLock, prepared before the clock starts.
const (
	pgLockSQL   = "SELECT pg_advisory_lock($1)"
	pgUnlockSQL = "SELECT pg_advisory_unlock($1)"
)

func init() {
	register(&Impl{
		Name:  "postgres",
		Kind:  KindMutex,
		Rank:  25,
		Color: "#8c564b",
		Peer:  postgresPeer,
		About: "PostgreSQL session-level advisory locks through pgx v5 (pg_advisory_lock and pg_advisory_unlock " +
			"on a 64-bit hash of the name) on a throwaway server: each handle has its own connection, waiters " +
			"block inside the server, whose lock manager grants a released lock to the next in line. RT counts queries.",
		Open: func(ctx context.Context, c *Conn, name string) (any, error) {
			conn, err := pgx.ConnectConfig(ctx, c.Peer.(*pgx.ConnConfig).Copy())
			if err != nil {
				return nil, err
			}
			c.OnClose(func() { _ = conn.Close(context.Background()) })
			for _, sql := range []string{pgLockSQL, pgUnlockSQL} {
				if _, err := conn.Prepare(ctx, sql, sql); err != nil {
					return nil, err
				}
			}
			h := fnv.New64a()
			h.Write([]byte(name))
			return &pgLock{conn: conn, key: int64(h.Sum64())}, nil
		},
	})
}

type pgLock struct {
	conn *pgx.Conn
	key  int64
}

func (l *pgLock) Lock(ctx context.Context) error {
	_, err := l.conn.Exec(ctx, pgLockSQL, l.key)
	return err
}

func (l *pgLock) Unlock(ctx context.Context) error {
	var ok bool
	if err := l.conn.QueryRow(ctx, pgUnlockSQL, l.key).Scan(&ok); err != nil {
		return err
	}
	if !ok {
		return errors.New("pg_advisory_unlock: lock not held")
	}
	return nil
}

// dialPostgres returns the configuration of one worker's connections: each
// handle connects with it, since advisory locks belong to a session. Its
// tracer counts every query.
func dialPostgres(ctx context.Context, addr string, sent *atomic.Int64) (any, func(), error) {
	cfg, err := pgx.ParseConfig("postgres://bench@" + addr + "/postgres?sslmode=disable&connect_timeout=5")
	if err != nil {
		return nil, nil, err
	}
	cfg.Tracer = pgCounter{sent}
	return cfg, func() {}, nil
}

type pgCounter struct{ sent *atomic.Int64 }

func (t pgCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	t.sent.Add(1)
	return ctx
}

func (pgCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// startPostgres initializes a cluster in dir and starts a server on a free
// loopback port with no Unix socket. PostgreSQL refuses to run as root: as
// root, it runs as the postgres user that Debian's package creates.
func startPostgres(ctx context.Context, dir string) (*peerProc, error) {
	bin, err := postgresBin()
	if err != nil {
		return nil, err
	}
	var o procOpts
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("PostgreSQL will not run as root, and there is no postgres user: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		o.uid, o.gid = uint32(uid), uint32(gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	if err := runProc(ctx, filepath.Join(bin, "initdb"),
		[]string{"-D", data, "-U", "bench", "--auth=trust", "--no-sync", "-E", "UTF8"}, o); err != nil {
		return nil, err
	}
	o.sig = syscall.SIGINT // fast shutdown
	for attempt := 0; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		addr := "127.0.0.1:" + strconv.Itoa(port)
		p, err := startProc(filepath.Join(bin, "postgres"), []string{"-D", data, "-p", strconv.Itoa(port),
			"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=", "-c", "max_connections=200"}, o)
		if err != nil {
			return nil, err
		}
		var version string
		err = p.waitReady(ctx, 30*time.Second, func(ctx context.Context) error {
			c, err := pgx.Connect(ctx, "postgres://bench@"+addr+"/postgres?sslmode=disable&connect_timeout=1")
			if err != nil {
				return err
			}
			defer c.Close(ctx)
			return c.QueryRow(ctx, "SHOW server_version").Scan(&version)
		})
		if err == nil {
			return &peerProc{Addr: addr, Version: strings.Fields(version + " ?")[0], proc: p}, nil
		}
		p.stop()
		if attempt == 2 || !strings.Contains(err.Error(), "already in use") {
			return nil, err
		}
	}
}

// postgresBin returns the directory of the newest postgres and initdb: the
// one on PATH, else Debian's /usr/lib/postgresql/VERSION/bin.
func postgresBin() (string, error) {
	var dirs []string
	if p, err := exec.LookPath("postgres"); err == nil {
		if p, err = filepath.EvalSymlinks(p); err == nil {
			dirs = append(dirs, filepath.Dir(p))
		}
	}
	debian, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(debian, func(a, b string) int { return pgVersion(b) - pgVersion(a) })
	for _, d := range append(dirs, debian...) {
		if executable(filepath.Join(d, "postgres")) && executable(filepath.Join(d, "initdb")) {
			return d, nil
		}
	}
	return "", fmt.Errorf("%w: no postgres and initdb on PATH or in /usr/lib/postgresql/*/bin", errNotInstalled)
}

func pgVersion(bin string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(bin)))
	return v
}

func executable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}
