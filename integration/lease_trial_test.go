package integration

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stepgate/stepgate/step"
)

// leaseKillTrials runs n trials of SIGKILL without restart: two engine
// hosts with short leases on one NATS server, four `engine run` clients
// driving append_fx steps through them, and one host SIGKILLed at a random
// moment and never started again. The clients finish their scripts through
// the other host; every acknowledged step is in the log as the client saw
// it; no effect happened twice (the kill -9 property of killTrial.check);
// and the killed host's lease was taken over by the other host, which
// settled what it left in doubt — with no `engine recover`.
// It relies on every host seeing the same filesystem: all its runs' locations are one temporary directory of this machine.
func leaseKillTrials(t *testing.T, n int) {
	for i := range n {
		t.Run("", func(t *testing.T) {
			url, nc := natsServer(t)
			hosts := []*leased{serveLeased(t, url, "a"), serveLeased(t, url, "b")}
			k := &killTrial{t: t, addr: strings.TrimPrefix(url, "nats://"), ws: t.TempDir(), clients: 4, steps: 30, timeout: "60s"}
			wait := k.drive(90 * time.Second)
			k.progressed(rand.N(4), rand.N(26))
			v := rand.N(2)
			victim, survivor := hosts[v], hosts[1-v]
			time.Sleep(jitter(0, 100*time.Millisecond))
			k.mu.Lock()
			k.running = append(k.running, k.clients-len(k.results))
			k.mu.Unlock()
			victim.kill9(t)
			k.kills++
			killed := time.Now()
			wait()
			k.check()
			until(t, victim.name+"'s lease taken over", func() bool {
				rec := leaseRecord(t, nc, victim.name)
				return rec.State == step.LeaseSettled && rec.By == survivor.name
			})
			rec := leaseRecord(t, nc, victim.name)
			t.Logf("trial %d: %s killed; %s took its lease over and settled %d steps; clients done %s after the kill",
				i, victim.name, survivor.name, rec.Steps, time.Since(killed).Round(10*time.Millisecond))
		})
	}
}

// One trial in CI; TestLeaseKillSoak runs 20 (go test -tags soak).
func TestLeaseKillTrials(t *testing.T) {
	leaseKillTrials(t, 1)
}
