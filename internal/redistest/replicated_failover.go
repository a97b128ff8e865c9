package redistest

import (
	"context"
	"fmt"
	"time"
)

// FailoverTimeout bounds the wait for a replica to take over from its
// master, by CLUSTER FAILOVER or after the master died (the nodes run with
// cluster-node-timeout 2000).
const FailoverTimeout = 20 * time.Second

// ManualFailover asks replica to take over from its master (CLUSTER
// FAILOVER, the graceful kind) and waits until it serves the master's
// slots and the cluster is healthy again, old master now its replica.
func (rc *ReplicatedCluster) ManualFailover(ctx context.Context, replica *Server) error {
	cl := nodeClient(replica)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, FailoverTimeout)
	defer cancel()
	// A manual failover that the replica cannot finish in time (it must
	// catch up with its master's offset first) is abandoned by Redis: ask
	// again until it is done.
	for {
		if err := cl.Do(ctx, "CLUSTER", "FAILOVER").Err(); err != nil {
			return fmt.Errorf("CLUSTER FAILOVER on %s: %w", replica.Addr(), err)
		}
		tctx, tcancel := context.WithTimeout(ctx, manualFailoverTry)
		err := poll(tctx, func() error {
			if !rc.servesSlots(tctx, replica) {
				return fmt.Errorf("%s does not serve slots yet", replica.Addr())
			}
			return nil
		})
		tcancel()
		if err == nil {
			return rc.WaitHealthy(ctx)
		}
		if ctx.Err() != nil {
			return err
		}
	}
}

// manualFailoverTry is how long ManualFailover waits for one CLUSTER
// FAILOVER before asking again: a little more than Redis's own limit for
// a manual failover (5s).
const manualFailoverTry = 6 * time.Second

// WaitTakeover waits until key's slot is served by a node other than old,
// as after old was killed, and returns the new master.
func (rc *ReplicatedCluster) WaitTakeover(ctx context.Context, key string, old *Server) (*Server, error) {
	ctx, cancel := context.WithTimeout(ctx, FailoverTimeout)
	defer cancel()
	var master *Server
	err := poll(ctx, func() error {
		m, _, err := rc.MasterOf(ctx, key)
		if err == nil && m == old {
			err = fmt.Errorf("%s still serves the slot of %q", old.Addr(), key)
		}
		if err != nil {
			// MasterOf wants a replica too; a promoted node has none yet.
			m, err = rc.owner(ctx, key)
			if err == nil && m == old {
				err = fmt.Errorf("%s still serves the slot of %q", old.Addr(), key)
			}
		}
		master = m
		return err
	})
	return master, err
}

// owner returns the node serving key's slot, as a running node sees it.
func (rc *ReplicatedCluster) owner(ctx context.Context, key string) (*Server, error) {
	slots, err := rc.slots(ctx)
	if err != nil {
		return nil, err
	}
	slot := Slot(key)
	for _, sl := range slots {
		if slot >= sl.Start && slot <= sl.End && len(sl.Nodes) > 0 {
			if s := rc.byAddr(sl.Nodes[0].Addr); s != nil {
				return s, nil
			}
		}
	}
	return nil, fmt.Errorf("no known node serves slot %d", slot)
}
