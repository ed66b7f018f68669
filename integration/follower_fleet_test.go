package integration

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/step"
)

// The fleet's size for the follower tests: five hosts following the stream
// while another publisher writes fleetBursts bursts of fleetBurstCommits
// commits (as a busy host's batches look to the others), then an idle
// minute.
const (
	fleetHosts        = 5
	fleetBursts       = 50
	fleetBurstRuns    = 30
	fleetBurstCommits = 3000 // fleetBurstRuns runs of a start and 99 steps
	fleetIdle         = 60 * time.Second
	// fleetMaxConsumers is what the stream may hold per live host: its
	// tail and, while a Sync of a cold host waits for it, nothing more.
	fleetMaxConsumers = 2
	// fleetIdleRate is the most requests a second an idle host may send
	// the server.
	fleetIdleRate = 20.0
)

// On one server: five hosts follow 150,000 commits of another publisher
// with at most two consumers each, all the while; idle, each host sends the
// server fewer than 20 messages a second (counted by the server); a host
// stopped with SIGTERM leaves no consumer, one killed with SIGKILL none
// after the follower's inactivity threshold.
func TestFollowersAtFleetSizeOnOneServer(t *testing.T) {
	t.Parallel()
	followerFleet(t, startProcServer(t), 1)
}

// The same on a 3-node cluster, R3.
func TestFollowersAtFleetSizeOnACluster(t *testing.T) {
	t.Parallel()
	followerFleet(t, startProcCluster(t, 3), 3)
}

func followerFleet(t *testing.T, c *procCluster, replicas int) {
	hosts := make([]*server, fleetHosts)
	metrics := make([]string, fleetHosts)
	for i := range hosts {
		addr := freeAddr(t)
		metrics[i] = "http://" + addr + "/metrics"
		hosts[i] = serveArgs(t, "--nats", c.url(i%len(c.ports)), "--replicas", fmt.Sprint(replicas),
			"--data", t.TempDir(), "--host", fmt.Sprintf("f%d", i+1), "--metrics", addr)
	}
	t.Cleanup(func() {
		for _, h := range hosts {
			if h.cmd.ProcessState == nil {
				h.stop(t)
			}
		}
	})
	nc, err := nats.Connect(c.urls(), nats.Name("fleet-publisher"), nats.MaxReconnects(-1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	stream, err := js.Stream(ctx, "STEPGATE")
	if err != nil {
		t.Fatal(err)
	}

	watch := watchConsumers(ctx, stream)
	pub := newFleetPublisher(t, nc, js, stream)
	for b := range fleetBursts {
		pub.burst(ctx, b)
	}
	last := pub.lastSeq(ctx)
	for i := range hosts {
		until(t, fmt.Sprintf("host f%d folding stream sequence %d", i+1, last), func() bool {
			return metric(t, metrics[i], "stepgate_projector_applied_sequence") >= float64(last)
		})
	}
	most := watch.stop()
	t.Logf("%d commits in %d bursts; the stream held at most %d consumers", last, fleetBursts, most)
	if most > fleetMaxConsumers*fleetHosts {
		t.Errorf("the stream held %d consumers while %d hosts followed it, want at most %d",
			most, fleetHosts, fleetMaxConsumers*fleetHosts)
	}
	if n := consumers(t, ctx, stream); n > fleetHosts {
		t.Errorf("after the bursts the stream holds %d consumers, want at most one per host (%d)", n, fleetHosts)
	}

	// Idle: what each host sends the server, counted by the server.
	before, at := hostConns(t, c), time.Now()
	time.Sleep(fleetIdle)
	after, took := hostConns(t, c), time.Since(at)
	if len(after) != fleetHosts {
		t.Errorf("the servers hold %d host connections, want %d: %v", len(after), fleetHosts, after)
	}
	for id, n := range after {
		rate := float64(n-before[id]) / took.Seconds()
		t.Logf("idle host connection %s: %.2f messages/s to the server", id, rate)
		if rate >= fleetIdleRate {
			t.Errorf("idle host connection %s sent the server %.1f messages a second, want fewer than %.0f", id, rate, fleetIdleRate)
		}
	}
	if n := consumers(t, ctx, stream); n > fleetHosts {
		t.Errorf("after an idle minute the stream holds %d consumers, want at most one per host (%d)", n, fleetHosts)
	}

	// A host stopped leaves nothing behind: SIGTERM at once, SIGKILL after
	// the follower's inactivity threshold.
	hosts[0].stop(t)
	waitConsumers(t, ctx, stream, fleetHosts-1, "host f1 stopped with SIGTERM", 30*time.Second)
	_ = hosts[1].cmd.Process.Signal(syscall.SIGKILL)
	_ = hosts[1].cmd.Wait()
	waitConsumers(t, ctx, stream, fleetHosts-2, "host f2 killed with SIGKILL", 3*step.FollowInactive)
}

// consumerWatch samples the stream's consumer count until stopped.
type consumerWatch struct {
	stopCh chan struct{}
	done   chan int
}

func watchConsumers(ctx context.Context, stream jetstream.Stream) *consumerWatch {
	w := &consumerWatch{stopCh: make(chan struct{}), done: make(chan int, 1)}
	go func() {
		most := 0
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-w.stopCh:
				w.done <- most
				return
			case <-tick.C:
			}
			ictx, cancel := context.WithTimeout(ctx, 5*time.Second)
			info, err := stream.Info(ictx)
			cancel()
			if err == nil {
				most = max(most, info.State.Consumers)
			}
		}
	}()
	return w
}

// stop ends the sampling and returns the most consumers seen.
func (w *consumerWatch) stop() int {
	close(w.stopCh)
	return <-w.done
}

func consumers(t *testing.T, ctx context.Context, stream jetstream.Stream) int {
	t.Helper()
	info, err := stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Consumers
}

// waitConsumers waits, for at most limit, until the stream holds at most n
// consumers.
func waitConsumers(t *testing.T, ctx context.Context, stream jetstream.Stream, n int, after string, limit time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(limit); ; time.Sleep(200 * time.Millisecond) {
		got := consumers(t, ctx, stream)
		if got <= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the stream still holds %d consumers after %v, want at most %d", after, got, limit, n)
		}
	}
}

// hostConns reads every node's connections (its monitoring endpoint) and
// returns, per connection of an engine host (named "stepgate"), the
// messages the server received from it.
func hostConns(t *testing.T, c *procCluster) map[string]uint64 {
	t.Helper()
	out := map[string]uint64{}
	for i, mon := range c.mons {
		if c.procs[i] == nil {
			continue
		}
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/connz?limit=1024", mon))
		if err != nil {
			t.Fatal(err)
		}
		var z struct {
			Conns []struct {
				CID    uint64 `json:"cid"`
				Name   string `json:"name"`
				InMsgs uint64 `json:"in_msgs"`
			} `json:"connections"`
		}
		err = json.NewDecoder(resp.Body).Decode(&z)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, cn := range z.Conns {
			if cn.Name == "stepgate" {
				out[fmt.Sprintf("%s/%d", c.names[i], cn.CID)] = cn.InMsgs
			}
		}
	}
	return out
}

// fleetPublisher writes runs of echo steps the way an engine commits them,
// copying the start commit of a run a host started.
type fleetPublisher struct {
	t        *testing.T
	js       jetstream.JetStream
	stream   jetstream.Stream
	start    *events.Commit
	identity string
	ids      *events.IDSource
}

func newFleetPublisher(t *testing.T, nc *nats.Conn, js jetstream.JetStream, stream jetstream.Stream) *fleetPublisher {
	t.Helper()
	info := must(ask[commands.RunInfo](t, nc, "start_run", commands.StartRunRequest{Location: t.TempDir()}))
	ctx := ctxT(t)
	m, err := stream.GetLastMsgForSubject(ctx, events.RunSubject(info.Run))
	if err != nil {
		t.Fatal(err)
	}
	start, err := events.Unmarshal(m.Data)
	if err != nil || start.Kind != events.KindStart {
		t.Fatalf("the run's first commit: %+v, %v; want its start", start, err)
	}
	p := &fleetPublisher{t: t, js: js, stream: stream, start: start, ids: events.NewIDSource(nil)}
	for _, ev := range start.Events {
		if cat, ok := ev.(events.CatalogAdvertised); ok {
			for _, tool := range cat.Tools {
				if tool.Name == "read" {
					p.identity = tool.Identity
				}
			}
		}
	}
	return p
}

// burst publishes fleetBurstCommits commits, fleetBurstRuns whole runs, up
// to the client's default of async publishes in flight.
func (p *fleetPublisher) burst(ctx context.Context, b int) {
	p.t.Helper()
	now := time.Now().UTC()
	var acks []jetstream.PubAckFuture
	for range fleetBurstRuns {
		start := *p.start // the events are shared: only the envelope differs
		start.ID, start.Run, start.At = p.ids.New(now), p.ids.New(now), now
		prev := start.ID
		commits := []*events.Commit{&start}
		for n := 1; len(commits) < fleetBurstCommits/fleetBurstRuns; n++ {
			c := p.step(now, start.Run, prev, n)
			commits = append(commits, c)
			prev = c.ID
		}
		for _, c := range commits {
			data, err := events.Marshal(c)
			if err != nil {
				p.t.Fatal(err)
			}
			a, err := p.js.PublishMsgAsync(&nats.Msg{Subject: events.RunSubject(c.Run), Data: data,
				Header: nats.Header{jetstream.MsgIDHeader: []string{c.ID}}})
			if err != nil {
				p.t.Fatalf("burst %d: %v", b, err)
			}
			acks = append(acks, a)
		}
	}
	for _, a := range acks {
		select {
		case <-a.Ok():
		case err := <-a.Err():
			p.t.Fatalf("burst %d: %v", b, err)
		case <-ctx.Done():
			p.t.Fatalf("burst %d: %v", b, ctx.Err())
		}
	}
}

// step is step n of run: one read call, allowed, settled and finalized in
// one commit naming prev.
func (p *fleetPublisher) step(now time.Time, run, prev string, n int) *events.Commit {
	buf := make([]byte, 16)
	_, _ = rand.Read(buf)
	path := "f" + hex.EncodeToString(buf)
	args, _ := json.Marshal(map[string]string{"path": path})
	rule := &events.Rule{Action: "*", Resource: "*", Effect: "allow", Source: "default"}
	return &events.Commit{ID: p.ids.New(now), Run: run, Step: n, Kind: events.KindStep, At: now, Host: "publisher", Prev: prev,
		Events: []events.Event{
			events.ToolCallRequested{CallID: "c1", Tool: "read", Args: args, Identity: p.identity},
			events.PermissionDecided{CallID: "c1", Verdict: events.VerdictAllow, Reason: `allowed by rule * "*" (built-in default)`,
				Rule: rule, Requests: []events.Request{{Action: "read", Resources: []string{path}, Save: []string{"*"}}}},
			events.ToolResultRecorded{CallID: "c1", Parts: []events.Part{{Type: "text", Text: path}}},
			events.StepFinalized{Calls: 1},
		}}
}

func (p *fleetPublisher) lastSeq(ctx context.Context) uint64 {
	p.t.Helper()
	info, err := p.stream.Info(ctx)
	if err != nil {
		p.t.Fatal(err)
	}
	return info.State.LastSeq
}
