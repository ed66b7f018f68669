package integration

import (
	"encoding/json"
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"github.com/stepgate/stepgate/step"
)

// Cluster shape: nodes, and runs driven at once.
const (
	clNodes    = 3
	clParallel = 16
)

// On a three-node JetStream cluster with an R3 stream, two and then three
// `engine serve` processes, each connected to a different node, serve
// clRuns runs of mhSteps steps. The requests of a run enter the cluster at
// a different node each (a run's step n through node n, its await through
// node n+1, its reply through node n+2) and the service's queue group hands
// each to any host of the cluster, so consecutive requests of a run are
// answered by different hosts about half the time (two hosts) or two
// thirds (three), and an asking step is often submitted, awaited and
// replied to on three different hosts. Nothing fails, every step is final
// with its own result, show of every run is the same whichever host
// answers, and every host answered its share.
// It relies on every host seeing the same filesystem: all its runs' locations are one temporary directory of this machine.
func TestRunsAcrossHostsOnACluster(t *testing.T) {
	for _, hosts := range []int{2, 3} {
		t.Run(fmt.Sprintf("%d hosts", hosts), func(t *testing.T) { clusterHosts(t, hosts) })
	}
}

func clusterHosts(t *testing.T, hosts int) {
	c := startCluster(t, clNodes)
	ws := t.TempDir()
	var srvs []*server
	for i := range hosts {
		s := serveArgs(t, "--nats", c.url(i), "--replicas", "3", "--data", t.TempDir(), "--host", fmt.Sprintf("h%d", i+1), "--test-tools")
		srvs = append(srvs, s)
	}
	defer func() {
		for i := len(srvs) - 1; i >= 0; i-- {
			_ = srvs[i].cmd.Process.Signal(syscall.SIGTERM)
			_ = srvs[i].cmd.Wait()
		}
	}()
	leader := c.streamLeader(step.DefaultStream)
	checkReplicas(t, c.connect(clNodes-1), 3)

	m := &multi{t: t, nc: c.connect(clNodes - 1)}
	for i := range hosts {
		m.hops = append(m.hops, c.connect(i))
	}
	start := time.Now()
	runs := m.drive(clRuns, clParallel, func(r int) string { return m.natsRun(ws, r, r%mhAskRunOf == 0) })
	t.Logf("%d hosts on %d nodes (stream leader n%d): %d runs of %d steps in %v; %d replies, %d awaits, %d errors",
		hosts, clNodes, leader+1, clRuns, mhSteps, time.Since(start).Round(time.Millisecond), m.replies.Load(), m.awaits.Load(), m.errs.Load())
	if n := m.errs.Load(); n > 0 {
		t.Fatalf("%d requests failed (the first ones are logged above)", n)
	}
	m.checkShows(runs, hosts)
	m.checkEveryHostServed(hosts)
	m.checkSpread(hosts, clRuns)
}

// checkReplicas checks the stream's replica count as the cluster reports it.
func checkReplicas(t *testing.T, nc *nats.Conn, want int) {
	t.Helper()
	msg, err := nc.Request("$JS.API.STREAM.INFO."+step.DefaultStream, nil, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var info struct {
		Config struct {
			Replicas int `json:"num_replicas"`
		} `json:"config"`
		Cluster struct {
			Replicas []json.RawMessage `json:"replicas"`
		} `json:"cluster"`
	}
	if err := json.Unmarshal(msg.Data, &info); err != nil {
		t.Fatal(err)
	}
	if info.Config.Replicas != want || len(info.Cluster.Replicas) != want-1 {
		t.Fatalf("stream %s: %d replicas configured, %d besides the leader; want %d: %s",
			step.DefaultStream, info.Config.Replicas, len(info.Cluster.Replicas), want, msg.Data)
	}
}

// checkSpread checks that every host answered a fair share of the
// submit_step requests (at least a third of an even share): the requests of
// a run were spread over the hosts, not served by one of them.
func (m *multi) checkSpread(hosts, runs int) {
	t := m.t
	inbox := nats.NewInbox()
	sub, err := m.nc.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := m.nc.PublishRequest("$SRV.STATS.stepgate", inbox, nil); err != nil {
		t.Fatal(err)
	}
	var got []int
	for range hosts {
		msg, err := sub.NextMsg(10 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		var st micro.Stats
		if err := json.Unmarshal(msg.Data, &st); err != nil {
			t.Fatal(err)
		}
		for _, ep := range st.Endpoints {
			if ep.Name == "submit_step" {
				got = append(got, ep.NumRequests)
			}
		}
	}
	t.Logf("submit_step requests answered per host: %v", got)
	if len(got) != hosts || slices.Min(got) < runs*mhSteps/hosts/3 {
		t.Errorf("submit_step requests answered per host %v: want each of %d hosts to answer at least %d", got, hosts, runs*mhSteps/hosts/3)
	}
}
