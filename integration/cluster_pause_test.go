//go:build soak

// A pause longer than an election timeout costs over 10 s a trial: it runs
// with -tags soak only.

package integration

import (
	"syscall"
	"testing"
	"time"
)

// pauseLonger is how long a node stays paused: longer than the longest
// election timeout of a nats-server (9 s), so the others elect a leader
// without it and it wakes up believing it still leads.
const pauseLonger = 11 * time.Second

// The stream leader's nats-server is paused with SIGSTOP for longer than an
// election timeout under load, then resumed with SIGCONT,
// processPauseTrials times. Invariants of TestStreamLeaderNodeDownOnACluster
// (no committed step lost, runs go on, only retryable errors), and no step
// executed twice: every echo_fx result a client saw final is the one show
// holds (a second execution would commit a second settle or conflict).
func TestStreamLeaderSIGSTOPOnAProcessCluster(t *testing.T) {
	c := startProcCluster(t, clNodes)
	leaderFaults(t, c, processPauseTrials, "paused with SIGSTOP", func(leader int) {
		c.signal(leader, syscall.SIGSTOP)
		time.Sleep(pauseLonger)
		c.signal(leader, syscall.SIGCONT)
		c.waitMetaLeader()
	})
}
