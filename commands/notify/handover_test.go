package notify_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/commands/notify"
	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/step/steptest"
)

// holdFirst is a receiver status that holds the first request until
// release is closed (or the client goes away), then answers it 200 like
// every other.
func holdFirst(first chan<- struct{}, release <-chan struct{}) func(int) int {
	return func(n int) int {
		if n == 1 {
			close(first)
			select {
			case <-release:
			case <-time.After(10 * time.Second):
			}
		}
		return http.StatusOK
	}
}

var issuedOnly = []string{config.EventTicketIssued}

// A host that stops while a receiver holds its delivery hands the commit
// back at once: another host delivers it, with the same delivery id, and
// the stopping host counts no failure. The stopping host has many idle
// pulls, each of which the log could hand the commit back to if it came
// back before they were withdrawn, and the hand-over is done a few times,
// since that race is lost only now and then.
func TestStoppingHostHandsTheDeliveryToAnother(t *testing.T) {
	for round := range 3 {
		t.Run(fmt.Sprint("round", round), handOver)
	}
}

// handOver stops a host while a receiver holds its delivery, and checks
// that another host delivers it at once: with an AckWait of an hour, a
// delivery that waited for the server to hand it out again would never
// reach the receiver within its wait.
func handOver(t *testing.T) {
	s := steptest.Start(t, "")
	h1, h2 := startHost(t, s, "h1"), startHost(t, s, "h2")
	first, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	r := newReceiver(t, holdFirst(first, release))
	hooks := []notify.Hook{{URL: r.srv.URL, Secret: secret, Events: issuedOnly}}
	m1, m2 := newCounts(), newCounts()
	stop1 := startDeliverer(t, s, h1, notify.Config{Hooks: hooks, Metrics: m1, Workers: 16, AttemptTimeout: 20 * time.Second, AckWait: time.Hour})
	askingRun(t, h1, "p1", "ask me")
	<-first // h1 is delivering; the receiver holds it
	startDeliverer(t, s, h2, notify.Config{Hooks: hooks, Metrics: m2, AckWait: time.Hour})
	stop1()
	got := r.waitFor(t, 2)
	if got[0].header.Get(notify.HeaderDelivery) != got[1].header.Get(notify.HeaderDelivery) {
		t.Errorf("the second host delivered %q, the first %q: want the same delivery id", got[1].header.Get(notify.HeaderDelivery), got[0].header.Get(notify.HeaderDelivery))
	}
	waitAcked(t, s, h2)
	if m2.get(&m2.delivered, config.EventTicketIssued) != 1 || m1.get(&m1.failed, config.EventTicketIssued) != 0 {
		t.Errorf("h2 delivered %d, h1 failed %d; want 1 and 0", m2.get(&m2.delivered, config.EventTicketIssued), m1.get(&m1.failed, config.EventTicketIssued))
	}
}

// A host that dies while delivering (its connection gone: no ack, no
// hand-back) leaves the commit to another host after the consumer's
// AckWait.
func TestDeadHostsDeliveryGoesToAnotherAfterAckWait(t *testing.T) {
	s := steptest.Start(t, "")
	h1, h2 := startHost(t, s, "h1"), startHost(t, s, "h2")
	first, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	r := newReceiver(t, holdFirst(first, release))
	hooks := []notify.Hook{{URL: r.srv.URL, Secret: secret, Events: issuedOnly}}
	nc, err := s.Embedded.Connect()
	if err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	const ackWait = time.Second
	startDeliverer(t, s, h1, notify.Config{JS: js, Hooks: hooks, AckWait: ackWait, AttemptTimeout: 20 * time.Second})
	askingRun(t, h1, "p1", "ask me")
	<-first
	nc.Close() // h1 dies: nothing more reaches the log from it
	died := time.Now()
	m2 := newCounts()
	startDeliverer(t, s, h2, notify.Config{Hooks: hooks, Metrics: m2, AckWait: ackWait})
	got := r.waitFor(t, 2)
	if took := got[1].at.Sub(died); took < ackWait/2 {
		t.Errorf("redelivered %s after the host died, before the AckWait %s", took, ackWait)
	}
	if got[0].header.Get(notify.HeaderDelivery) != got[1].header.Get(notify.HeaderDelivery) {
		t.Errorf("delivery ids %q and %q, want one", got[0].header.Get(notify.HeaderDelivery), got[1].header.Get(notify.HeaderDelivery))
	}
	waitAcked(t, s, h2)
	if m2.get(&m2.delivered, config.EventTicketIssued) != 1 {
		t.Errorf("h2 delivered %d, want 1", m2.get(&m2.delivered, config.EventTicketIssued))
	}
}

// A delivery that takes longer than the AckWait (a slow receiver) stays
// with its host, which tells the log it is working on it: the other host
// does not deliver it again. Steps go on meanwhile: delivery is off the
// step path.
func TestSlowReceiverKeepsTheDeliveryAndDoesNotSlowSteps(t *testing.T) {
	s := steptest.Start(t, "")
	h1, h2 := startHost(t, s, "h1"), startHost(t, s, "h2")
	first, release := make(chan struct{}), make(chan struct{})
	r := newReceiver(t, holdFirst(first, release))
	hooks := []notify.Hook{{URL: r.srv.URL, Secret: secret, Events: issuedOnly}}
	const ackWait = 300 * time.Millisecond
	m1, m2 := newCounts(), newCounts()
	startDeliverer(t, s, h1, notify.Config{Hooks: hooks, Metrics: m1, AckWait: ackWait, AttemptTimeout: 20 * time.Second})
	startDeliverer(t, s, h2, notify.Config{Hooks: hooks, Metrics: m2, AckWait: ackWait, AttemptTimeout: 20 * time.Second})
	askingRun(t, h1, "p1", "ask me")
	<-first
	for i := range 3 { // committed while the receiver holds a delivery: steps never wait for webhooks
		askingRun(t, []*commands.Host{h1, h2}[i%2], "p2", "ask more") // their tickets go to the receiver too
	}
	time.Sleep(4 * ackWait)
	close(release)
	r.waitFor(t, 4)
	waitAcked(t, s, h1)
	seen := map[string]int{}
	for _, q := range r.requests() {
		seen[q.header.Get(notify.HeaderDelivery)]++
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("delivery %s arrived %d times while its host held it, want once", id, n)
		}
	}
	if len(seen) != 4 {
		t.Errorf("%d deliveries, want 4", len(seen))
	}
}

// A receiver that never answers costs each attempt its AttemptTimeout, no
// more: the delivery is given up after the attempts, in bounded time.
func TestHangingReceiverIsBoundedPerAttempt(t *testing.T) {
	s := steptest.Start(t, "")
	h := startHost(t, s, "h1")
	release := make(chan struct{})
	defer close(release)
	r := newReceiver(t, func(int) int { <-release; return http.StatusOK })
	m := newCounts()
	startDeliverer(t, s, h, notify.Config{Metrics: m, Attempts: 2, Backoff: 10 * time.Millisecond, AttemptTimeout: 200 * time.Millisecond,
		Hooks: []notify.Hook{{URL: r.srv.URL, Secret: secret, Events: issuedOnly}}})
	askingRun(t, h, "p1", "ask me")
	// The receiver never answers: without the attempt's timeout the
	// delivery would never be given up on.
	for deadline := time.Now().Add(2 * time.Minute); m.get(&m.failed, config.EventTicketIssued) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a hanging receiver was not given up on in 2 minutes")
		}
	}
	if n := len(r.requests()); n != 2 {
		t.Errorf("%d attempts reached the receiver, want 2", n)
	}
}
