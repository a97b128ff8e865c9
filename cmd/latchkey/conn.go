package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/latchkey/latchkey/mutex"
	"github.com/redis/go-redis/v9"
)

// defaultAddr is the server used when neither -redis nor REDIS_URL says.
const defaultAddr = "127.0.0.1:6379"

// authEnv is the environment variable that holds the password when neither
// -password nor the URL gives one, as for redis-cli: unlike a flag, it does
// not show in ps.
const authEnv = "REDISCLI_AUTH"

// connFlags are the connection settings, given before or after the command.
type connFlags struct {
	addr     string // host:port, seeds a,b,c, or a redis:// or rediss:// URL
	cluster  bool
	master   string // Sentinel: the master's name; addr lists the sentinels
	user     string
	password string
	timeout  time.Duration
}

// register adds the connection flags to fs, with the values parsed so far
// as their defaults, so that flags after the command override those before.
func (c *connFlags) register(fs *flag.FlagSet) {
	if c.timeout == 0 {
		c.timeout = 10 * time.Second
	}
	fs.StringVar(&c.addr, "redis", c.addr, "server `ADDR`: host:port, seeds host:port,... with -cluster, or a redis:// or rediss:// URL (default $REDIS_URL, else "+defaultAddr+")")
	fs.BoolVar(&c.cluster, "cluster", c.cluster, "connect to a Redis Cluster")
	fs.StringVar(&c.master, "sentinel-master", c.master, "connect through Redis Sentinel to the master called `NAME`; -redis lists the sentinels, host:port,...")
	fs.StringVar(&c.user, "user", c.user, "ACL user name (overrides the URL's)")
	fs.StringVar(&c.password, "password", c.password, "password (overrides the URL's and $"+authEnv+"; visible in ps: prefer $"+authEnv+")")
	fs.DurationVar(&c.timeout, "timeout", c.timeout, "bound on a command's reads, and on its change; on each round trip of ls, each look of watch")
}

// target returns the address or URL to connect to.
func (c *connFlags) target() string {
	if c.addr != "" {
		return c.addr
	}
	if u := os.Getenv("REDIS_URL"); u != "" {
		return u
	}
	return defaultAddr
}

// A conn is an open client and the server it talks to, as errors name it.
type conn struct {
	client redis.UniversalClient
	server string // host:port, or the cluster's seeds; never a password
	// lease is the watchdog lease that holders are taken to renew (-lease).
	lease time.Duration

	mu  sync.Mutex
	pub string // see publish
}

// open makes the client. It does no I/O: a server that cannot be reached
// shows in the first command's error.
func (c *connFlags) open() (*conn, error) {
	t := c.target()
	url := strings.Contains(t, "://")
	switch {
	case c.cluster && c.master != "":
		return nil, usagef("-cluster and -sentinel-master exclude each other")
	case c.master != "" && url:
		return nil, usagef("-sentinel-master: give the sentinels as host:port,..., not a URL")
	case c.master != "":
		o := &redis.FailoverOptions{MasterName: c.master, SentinelAddrs: strings.Split(t, ",")}
		o.Username, o.Password = c.user, c.auth("")
		o.DialTimeout, o.MaxRetries = min(c.timeout, 5*time.Second), 1
		o.ReadTimeout, o.WriteTimeout, o.ContextTimeoutEnabled = c.timeout, c.timeout, true
		return &conn{client: redis.NewFailoverClient(o), server: "master " + c.master + " via sentinels " + t, lease: mutex.DefaultWatchdogTimeout}, nil
	case c.cluster:
		o := &redis.ClusterOptions{Addrs: strings.Split(t, ",")}
		if url {
			var err error
			if o, err = redis.ParseClusterURL(t); err != nil {
				return nil, usagef("-redis: %v", err)
			}
		}
		if c.user != "" {
			o.Username = c.user
		}
		o.Password = c.auth(o.Password)
		o.DialTimeout, o.MaxRetries = min(c.timeout, 5*time.Second), 1
		o.ReadTimeout, o.WriteTimeout, o.ContextTimeoutEnabled = c.timeout, c.timeout, true
		o.ClusterSlots = clusterMap(o)
		return &conn{client: redis.NewClusterClient(o), server: "cluster " + strings.Join(o.Addrs, ","), lease: mutex.DefaultWatchdogTimeout}, nil
	}
	o := &redis.Options{Addr: t}
	if url {
		var err error
		if o, err = redis.ParseURL(t); err != nil {
			return nil, usagef("-redis: %v", err)
		}
	}
	if c.user != "" {
		o.Username = c.user
	}
	o.Password = c.auth(o.Password)
	o.DialTimeout, o.MaxRetries = min(c.timeout, 5*time.Second), 1
	o.ReadTimeout, o.WriteTimeout, o.ContextTimeoutEnabled = c.timeout, c.timeout, true
	return &conn{client: redis.NewClient(o), server: o.Addr, lease: mutex.DefaultWatchdogTimeout}, nil
}

// auth returns the password: -password's, else the URL's (fromURL), else
// $REDISCLI_AUTH's, which redis-cli reads the same way.
func (c *connFlags) auth(fromURL string) string {
	switch {
	case c.password != "":
		return c.password
	case fromURL != "":
		return fromURL
	}
	return os.Getenv(authEnv)
}

// keyErr names the server and the key in a Redis error.
func (c *conn) keyErr(key string, err error) error {
	return fmt.Errorf("%s: key %q: %w", c.server, key, err)
}

// withTimeout bounds one command's Redis calls.
func (e *env) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, e.conn.timeout)
}
