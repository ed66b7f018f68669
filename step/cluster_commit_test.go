package step_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/step"
)

// startCluster starts three JetStream nodes in this process, routed on
// loopback, and returns a connection to the first once they have a meta
// leader. Everything stops when the test ends.
func startCluster(t *testing.T) *nats.Conn {
	t.Helper()
	port := func() int {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return l.Addr().(*net.TCPAddr).Port
	}
	const n = 3
	var routes []string
	var routePorts, clientPorts []int
	for range n {
		routePorts, clientPorts = append(routePorts, port()), append(clientPorts, port())
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", routePorts[len(routePorts)-1]))
	}
	var nodes []*natsserver.Server
	for i := range n {
		s, err := natsserver.NewServer(&natsserver.Options{
			ServerName: fmt.Sprintf("n%d", i+1), Host: "127.0.0.1", Port: clientPorts[i],
			JetStream: true, StoreDir: t.TempDir(), NoSigs: true, NoLog: true,
			Cluster: natsserver.ClusterOpts{Name: "step-test", Host: "127.0.0.1", Port: routePorts[i]},
			Routes:  natsserver.RoutesFromStr(strings.Join(routes, ",")),
		})
		if err != nil {
			t.Fatal(err)
		}
		go s.Start()
		nodes = append(nodes, s)
		t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		leader, current := false, true
		for _, s := range nodes {
			current = current && s.JetStreamIsCurrent()
			leader = leader || s.JetStreamIsLeader()
		}
		if leader && current {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the cluster has no meta leader after 30s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	nc, err := nats.Connect(fmt.Sprintf("nats://127.0.0.1:%d", clientPorts[0]))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// On an R3 stream, a commit sent while the run's previous commit is still
// in process on the stream leader (acknowledged to its client, say, but not
// yet cleared from the leader's books) is refused with 10164, although
// its expectation is right: no other writer committed. Commit sends it
// again until the leader has the previous one, and it is stored. Here the
// previous commit is published asynchronously right before, which keeps it
// in process when the next one arrives, trial after trial.
func TestCommitWhileThePreviousIsInProcess(t *testing.T) {
	nc := startCluster(t)
	ctx := context.Background()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	log, err := step.Open(ctx, js, step.StreamConfig{Replicas: 3})
	if err != nil {
		t.Fatal(err)
	}
	ajs, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ids := events.NewIDSource(nil)
	const trials = 20
	missed := 0 // trials whose previous commit had not reached the leader yet
	for trial := range trials {
		run := ids.New(time.Now())
		last, err := log.Commit(ctx, commit(ids, run, 1), 0)
		if err != nil {
			t.Fatal(err)
		}
		prev := commit(ids, run, 2)
		data, err := events.Marshal(prev)
		if err != nil {
			t.Fatal(err)
		}
		ack, err := ajs.PublishMsgAsync(&nats.Msg{Subject: events.RunSubject(run), Data: data, Header: nats.Header{
			jetstream.MsgIDHeader:               []string{prev.ID},
			jetstream.ExpectedLastSubjSeqHeader: []string{fmt.Sprint(last)},
		}})
		if err != nil {
			t.Fatal(err)
		}
		// Nothing else writes: the previous commit gets the next sequence.
		seq, err := log.Commit(ctx, commit(ids, run, 3), last+1)
		if errors.Is(err, step.ErrConflict) && !errors.Is(err, context.DeadlineExceeded) {
			// On a loaded machine the previous commit may not have reached the
			// leader's books at all yet (wrong last sequence, not "in
			// process"): a conflict, which a host answers by catching up and
			// committing again — nothing is lost or stored twice. Do that, and
			// count the trial as not having met the case.
			select {
			case a := <-ack.Ok():
				if a.Sequence != last+1 {
					t.Fatalf("trial %d: the previous commit at %d, want %d", trial, a.Sequence, last+1)
				}
			case err := <-ack.Err():
				t.Fatalf("trial %d: the previous commit: %v", trial, err)
			}
			if seq, err = log.Commit(ctx, commit(ids, run, 3), last+1); err != nil || seq != last+2 {
				t.Fatalf("trial %d: the commit again after a conflict: %d, %v; want %d", trial, seq, err, last+2)
			}
			missed++
			continue
		}
		if err != nil {
			t.Fatalf("trial %d: the commit after one in process: %v", trial, err)
		}
		select {
		case a := <-ack.Ok():
			if a.Sequence != last+1 || seq != last+2 {
				t.Fatalf("trial %d: sequences %d, %d; want %d, %d", trial, a.Sequence, seq, last+1, last+2)
			}
		case err := <-ack.Err():
			t.Fatalf("trial %d: the previous commit: %v", trial, err)
		}
	}
	if missed == trials {
		t.Fatalf("in none of %d trials was the commit stored behind the previous one: every trial found the previous commit not yet at the leader", trials)
	}
	t.Logf("%d of %d trials stored the commit right behind the previous one; %d found the previous not yet at the leader (a conflict, committed again)", trials-missed, trials, missed)
}
