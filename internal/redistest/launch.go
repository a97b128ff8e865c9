package redistest

// Launch starts a redis-server on a free port of 127.0.0.1 with its data
// directory in dir, passing args (such as "--replicaof", host, port) after
// the default arguments, and returns once it answers PING. It is
// [StartServer] for programs that have no testing.TB, such as the benchmark
// suite: the caller stops the server with [Server.Stop] or [Server.Kill] and
// removes dir. Launch returns an error when redis-server is not on PATH
// (see [Available]) or does not start.
func Launch(dir string, args ...string) (*Server, error) {
	return startServer(dir, args, false)
}

// LaunchCluster starts a Redis Cluster of the given number of masters
// without replicas, each node with a data directory under dir, and returns
// once every slot is served, as [StartCluster] does. It is for programs
// that have no testing.TB: the caller stops the nodes with [Cluster.Kill]
// and removes dir.
func LaunchCluster(dir string, masters int) (*Cluster, error) {
	return startCluster(dir, masters)
}

// Kill kills every node of the cluster with SIGKILL and waits for them to
// exit. The data directories are left in place.
func (c *Cluster) Kill() {
	c.kill()
}
