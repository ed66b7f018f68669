package integration

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"
)

// Shape of one host-kill trial on the cluster: clients each driving a run
// of this many append_fx steps at once (w2-style: many runs in flight).
const (
	hostKillClients = 6
	hostKillSteps   = 12
)

// An `engine serve` host is killed with SIGKILL at a random moment while
// clients drive runs through three hosts, each on its own node of a 3-node
// cluster (R3), and started again on its data a moment later,
// hostKillTrials times (a fresh cluster each). The clients are `engine run`
// processes given every node's URL: a request lost with the killed host is
// sent again and any host answers it. Invariants (killTrial.check): every
// client completes its script; every step a client saw committed is in the
// log, final, with the result the client saw; none is left open (every call
// the killed host had in doubt is settled by it once restarted); no side
// effect happened twice (the effects files); one run per client.
// It relies on every host seeing the same filesystem: all its runs' locations are one temporary directory of this machine.
func TestEngineHostSIGKILLOnACluster(t *testing.T) {
	for i := range hostKillTrials {
		t.Run(fmt.Sprint(i+1), func(t *testing.T) { hostKillTrial(t) })
	}
}

func hostKillTrial(t *testing.T) {
	c := startCluster(t, clNodes)
	k := &killTrial{t: t, ws: t.TempDir(), clients: hostKillClients, steps: hostKillSteps, timeout: "60s", nats: c.urls()}
	data := make([]string, clNodes)
	hosts := make([]*server, clNodes)
	serveHost := func(i int) *server {
		return serveArgs(t, "--nats", c.url(i), "--replicas", "3", "--data", data[i], "--host", fmt.Sprintf("h%d", i+1), "--test-tools")
	}
	for i := range clNodes {
		data[i] = t.TempDir()
		hosts[i] = serveHost(i)
	}
	defer func() {
		for i := len(hosts) - 1; i >= 0; i-- {
			_ = hosts[i].cmd.Process.Signal(syscall.SIGTERM)
			_ = hosts[i].cmd.Wait()
			if t.Failed() {
				t.Logf("host h%d: %v\n%s", i+1, hosts[i].cmd.ProcessState, tail(hosts[i].stderr.String(), 20))
			}
		}
	}()
	wait := k.drive(90 * time.Second)
	k.progressed(rand.N(hostKillClients), 1+rand.N(hostKillSteps-2))
	victim := rand.N(clNodes)
	k.mu.Lock()
	k.running = append(k.running, k.clients-len(k.results))
	k.mu.Unlock()
	hosts[victim].kill9(t)
	fmt.Fprintf(&k.serveLog, "--- host h%d killed:\n%s", victim+1, hosts[victim].stderr.String())
	k.kills++
	time.Sleep(jitter(0, 300*time.Millisecond))
	hosts[victim] = serveHost(victim)
	k.restarted++
	wait()
	k.check()
	t.Logf("host h%d (on node n%d) killed with SIGKILL and restarted", victim+1, victim+1)
}
