package integration

import (
	"testing"
	"time"
)

// The stream leader's nats-server process is killed with SIGKILL under load
// and started again on its store a moment later, processKillTrials times;
// the invariants of TestStreamLeaderNodeDownOnACluster hold: 0 committed
// steps lost, runs continue after the election, clients see only retryable
// errors meanwhile.
// It relies on every host seeing the same filesystem: all its runs' locations are one temporary directory of this machine.
func TestStreamLeaderSIGKILLOnAProcessCluster(t *testing.T) {
	c := startProcCluster(t, clNodes)
	leaderFaults(t, c, processKillTrials, "killed with SIGKILL", func(leader int) {
		c.kill9(leader)
		time.Sleep(faultDownTime)
		c.start(leader)
		c.waitMetaLeader()
	})
}
