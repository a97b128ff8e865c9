package main

import (
	"context"
	"strings"
	"testing"

	"github.com/latchkey/latchkey/election"
	"github.com/redis/go-redis/v9"
)

// testElection: inspect shows an election's leader, its value and term,
// while it leads, and nothing of it once it resigned.
func testElection(t *testing.T, c cli, rdb redis.UniversalClient) {
	ctx := t.Context()
	name := testName(t, "election")
	e := election.New(rdb, name)
	if _, err := e.Campaign(ctx, "node-7:8080"); err != nil {
		t.Fatal(err)
	}
	st := c.inspect(t, name)
	if st.Kind != kindMutex || st.Leader == nil || st.Leader.Value != "node-7:8080" || st.Leader.Term != e.Term() || *st.Token != e.Term() {
		t.Errorf("election: kind %s, leader %+v, token %v; want mutex, node-7:8080 at term %d", st.Kind, st.Leader, st.Token, e.Term())
	}
	table, _, _ := c.run(t, "inspect", name)
	if !strings.Contains(table, "LEADER") || !strings.Contains(table, `"node-7:8080"`) {
		t.Errorf("inspect's table shows no leader:\n%s", table)
	}
	if err := e.Resign(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := c.inspect(t, name); st.Leader != nil {
		t.Errorf("after Resign inspect shows leader %+v", st.Leader)
	}
}
