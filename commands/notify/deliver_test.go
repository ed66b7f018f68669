package notify_test

import (
	"crypto/rand"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/commands/notify"
	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/internal/syncbuf"
	"github.com/stepgate/stepgate/step/steptest"
)

// A ticket issued, answered and its run ended reach the receiver as three
// signed POSTs that verify with the secret, each saying what an operator
// needs (project, agent, tool, the verdict's reason, the inbox link);
// arguments only to the webhook that asked for them.
func TestDeliveriesAreSignedAndComplete(t *testing.T) {
	s := steptest.Start(t, "")
	h := startHost(t, s, "h1")
	plain, withArgs := newReceiver(t, nil), newReceiver(t, nil)
	all := []string{config.EventTicketIssued, config.EventTicketResolved, config.EventRunEnded}
	startDeliverer(t, s, h, notify.Config{PublicURL: "https://ops.example/", Version: "test", Hooks: []notify.Hook{
		{URL: plain.srv.URL + "/hook", Secret: secret, Events: all},
		{URL: withArgs.srv.URL, Secret: secret, Events: all, IncludeArgs: true},
	}})
	ctx := ctxT(t)
	run, ticket := askingRun(t, h, "p1", "ask me")
	if _, err := h.Reply(ctx, commands.ReplyRequest{Ticket: ticket, Reply: events.ReplyReject, Message: "not now", Principal: "operator:ops-1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.EndRun(ctx, commands.EndRunRequest{Run: run}); err != nil {
		t.Fatal(err)
	}
	got := byEvent(t, plain.waitFor(t, 3))
	for _, ev := range all {
		r, ok := got[ev]
		if !ok {
			t.Fatalf("no %s delivered; got %v", ev, got)
		}
		p := r.payload(t)
		if err := notify.Verify(secret, r.header.Get(notify.HeaderTimestamp), r.header.Get(notify.HeaderSignature), r.body, time.Now(), notify.DefaultTolerance); err != nil {
			t.Errorf("%s: signature: %v", ev, err)
		}
		if err := notify.Verify([]byte("another secret"), r.header.Get(notify.HeaderTimestamp), r.header.Get(notify.HeaderSignature), r.body, time.Now(), notify.DefaultTolerance); err == nil {
			t.Errorf("%s: verifies with another secret", ev)
		}
		if r.header.Get(notify.HeaderDelivery) != p.Delivery || r.header.Get(notify.HeaderEvent) != ev || p.Delivery == "" {
			t.Errorf("%s: headers %v, payload delivery %q", ev, r.header, p.Delivery)
		}
		if p.Run != run || p.Project != "p1" || p.Agent != "build" || p.Host != "h1" || p.Seq == 0 || p.Time.IsZero() {
			t.Errorf("%s: payload %+v; want run %s, project p1, agent build, host h1, a seq and a time", ev, p, run)
		}
		if p.Args != nil || p.Message != "" {
			t.Errorf("%s: arguments or message sent without include_args: %s", ev, r.body)
		}
	}
	issued, resolved, ended := got[config.EventTicketIssued].payload(t), got[config.EventTicketResolved].payload(t), got[config.EventRunEnded].payload(t)
	if issued.Ticket != ticket || issued.Tool != "count_fx" || issued.Step != 1 || issued.Kind != events.TicketPermission ||
		issued.Link != "https://ops.example/tickets/"+ticket || issued.Reason == "" {
		t.Errorf("ticket_issued %+v; want the ticket, tool count_fx, step 1, the inbox link and the reason", issued)
	}
	if resolved.Ticket != ticket || resolved.Tool != "count_fx" || resolved.Reply != events.ReplyReject || resolved.Approved == nil || *resolved.Approved ||
		resolved.Principal != "operator:ops-1" || resolved.Reason == "" {
		t.Errorf("ticket_resolved %+v; want a rejection by operator:ops-1 of count_fx with the reason", resolved)
	}
	if ended.Cause != events.CauseCompleted {
		t.Errorf("run_ended %+v; want cause completed", ended)
	}
	t.Logf("ticket_issued: %s", got[config.EventTicketIssued].body)
	t.Logf("ticket_resolved: %s", got[config.EventTicketResolved].body)
	t.Logf("run_ended: %s", got[config.EventRunEnded].body)

	full := byEvent(t, withArgs.waitFor(t, 3))
	if a := full[config.EventTicketIssued].payload(t).Args; string(a) != `{"text":"ask me"}` {
		t.Errorf("include_args: ticket_issued args %s, want the call's", a)
	}
	if m := full[config.EventTicketResolved].payload(t).Message; m != "not now" {
		t.Errorf("include_args: ticket_resolved message %q, want the reply's", m)
	}
}

// Two hosts on one stream, each with the same webhook: every event reaches
// the receiver exactly once, whichever host made the commit.
func TestOneDeliveryPerEventWithTwoHosts(t *testing.T) {
	s := steptest.Start(t, "")
	h1, h2 := startHost(t, s, "h1"), startHost(t, s, "h2")
	r := newReceiver(t, nil)
	hooks := []notify.Hook{{URL: r.srv.URL, Secret: secret, Events: []string{config.EventTicketIssued, config.EventTicketResolved, config.EventRunEnded}}}
	m1, m2 := newCounts(), newCounts()
	startDeliverer(t, s, h1, notify.Config{Hooks: hooks, Metrics: m1})
	startDeliverer(t, s, h2, notify.Config{Hooks: hooks, Metrics: m2})
	const runs = 8
	for i := range runs {
		h := []*commands.Host{h1, h2}[i%2]
		run, ticket := askingRun(t, h, "p1", fmt.Sprint("ask ", i))
		if _, err := h.Reply(ctxT(t), commands.ReplyRequest{Ticket: ticket, Reply: events.ReplyOnce, Principal: "operator:ops-2"}); err != nil {
			t.Fatal(err)
		}
		if _, err := h.EndRun(ctxT(t), commands.EndRunRequest{Run: run}); err != nil {
			t.Fatal(err)
		}
	}
	r.waitFor(t, 3*runs)
	time.Sleep(500 * time.Millisecond) // a second delivery would come now
	seen := map[string]int{}
	events := map[string]int{}
	for _, q := range r.requests() {
		p := q.payload(t)
		seen[p.Delivery]++
		events[p.Event]++
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("delivery %s arrived %d times, want once", id, n)
		}
	}
	if len(seen) != 3*runs || events[config.EventTicketIssued] != runs || events[config.EventTicketResolved] != runs || events[config.EventRunEnded] != runs {
		t.Errorf("%d deliveries %v, want %d of each event", len(seen), events, runs)
	}
	d1 := m1.get(&m1.delivered, config.EventTicketIssued) + m1.get(&m1.delivered, config.EventTicketResolved) + m1.get(&m1.delivered, config.EventRunEnded)
	d2 := m2.get(&m2.delivered, config.EventTicketIssued) + m2.get(&m2.delivered, config.EventTicketResolved) + m2.get(&m2.delivered, config.EventRunEnded)
	if d1+d2 != 3*runs {
		t.Errorf("the hosts counted %d and %d deliveries, want %d in all", d1, d2, 3*runs)
	}
	t.Logf("h1 delivered %d, h2 %d", d1, d2)
}

// A receiver that is down gets every attempt, with a backoff between them,
// then the delivery is given up: logged with its url, event and attempts,
// and counted as failed; the commit is acknowledged (not handed out again).
func TestReceiverDownRetriesThenFails(t *testing.T) {
	s := steptest.Start(t, "")
	h := startHost(t, s, "h1")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String() + "/hook"
	where := "http://" + ln.Addr().String() + "/…"
	ln.Close() // nothing listens: every attempt is refused
	m := newCounts()
	var logs syncbuf.Buffer
	startDeliverer(t, s, h, notify.Config{Metrics: m, Logger: logger(&logs), Attempts: 3, Backoff: 20 * time.Millisecond,
		Hooks: []notify.Hook{{URL: down, Secret: secret, Events: []string{config.EventTicketIssued}}}})
	start := time.Now()
	askingRun(t, h, "p1", "ask me")
	deadline := time.Now().Add(10 * time.Second)
	for m.get(&m.failed, config.EventTicketIssued) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := m.get(&m.failed, config.EventTicketIssued); got != 1 {
		t.Fatalf("failed deliveries %d, want 1", got)
	}
	if got := m.get(&m.retried, config.EventTicketIssued); got != 2 {
		t.Errorf("retries %d, want 2 (3 attempts)", got)
	}
	if took := time.Since(start); took < 30*time.Millisecond {
		t.Errorf("3 attempts took %s: no backoff between them", took)
	}
	out := logs.String()
	if !strings.Contains(out, "webhook: delivery failed; giving up") || !strings.Contains(out, "attempts=3") || !strings.Contains(out, where) ||
		!strings.Contains(out, "event=ticket_issued") {
		t.Errorf("log does not say the delivery failed after 3 attempts to %s:\n%s", where, out)
	}
	if strings.Contains(out, string(secret)) || strings.Contains(out, "/hook") {
		t.Errorf("the log holds the secret or the URL's path:\n%s", out)
	}
	for line := range strings.Lines(out) {
		if strings.Contains(line, "giving up") {
			t.Logf("%s", line)
		}
	}
	waitAcked(t, s, h)
}

// A receiver that answers 503 twice, then 200, gets the event delivered on
// the third attempt: two retries, no failure.
func TestReceiverRecoversWithinTheAttempts(t *testing.T) {
	s := steptest.Start(t, "")
	h := startHost(t, s, "h1")
	r := newReceiver(t, func(n int) int {
		if n <= 2 {
			return 503
		}
		return 200
	})
	m := newCounts()
	startDeliverer(t, s, h, notify.Config{Metrics: m, Attempts: 5, Backoff: 10 * time.Millisecond,
		Hooks: []notify.Hook{{URL: r.srv.URL, Secret: secret, Events: []string{config.EventTicketIssued}}}})
	askingRun(t, h, "p1", "ask me")
	got := r.waitFor(t, 3)
	waitAcked(t, s, h)
	if m.get(&m.delivered, config.EventTicketIssued) != 1 || m.get(&m.retried, config.EventTicketIssued) != 2 || m.get(&m.failed, config.EventTicketIssued) != 0 {
		t.Errorf("delivered %v retried %v failed %v; want 1, 2, 0", m.delivered, m.retried, m.failed)
	}
	if id := got[0].header.Get(notify.HeaderDelivery); id == "" || got[1].header.Get(notify.HeaderDelivery) != id || got[2].header.Get(notify.HeaderDelivery) != id {
		t.Errorf("attempts carry delivery ids %q, %q, %q; want one id", id, got[1].header.Get(notify.HeaderDelivery), got[2].header.Get(notify.HeaderDelivery))
	}
}

// A 4xx other than 408/425/429 is the receiver's refusal: given up at once.
func TestReceiverRefusalIsNotRetried(t *testing.T) {
	s := steptest.Start(t, "")
	h := startHost(t, s, "h1")
	r := newReceiver(t, func(int) int { return 401 })
	m := newCounts()
	startDeliverer(t, s, h, notify.Config{Metrics: m, Attempts: 5, Backoff: 10 * time.Millisecond,
		Hooks: []notify.Hook{{URL: r.srv.URL, Secret: secret, Events: []string{config.EventTicketIssued}}}})
	askingRun(t, h, "p1", "ask me")
	r.waitFor(t, 1)
	waitAcked(t, s, h)
	time.Sleep(100 * time.Millisecond)
	if n := len(r.requests()); n != 1 || m.get(&m.failed, config.EventTicketIssued) != 1 {
		t.Errorf("%d attempts, %d failed; want 1 and 1", n, m.get(&m.failed, config.EventTicketIssued))
	}
}

// waitAcked waits until the fleet's consumer has nothing pending or
// unacknowledged.
func waitAcked(t *testing.T, s *steptest.Server, h *commands.Host) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		c, err := s.JS.Consumer(ctxT(t), h.Log.Name(), notify.DefaultConsumer)
		if err != nil {
			t.Fatal(err)
		}
		info, err := c.Info(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		if info.NumAckPending == 0 && info.NumPending == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the consumer still has commits pending or unacknowledged after 10s")
}

// A commit the projection refuses — here a ticket published straight to a
// run subject for a run that never started — is not delivered: a webhook
// hears only of what the engine took for done. A real ticket after it is.
func TestForgedCommitIsNotDelivered(t *testing.T) {
	s := steptest.Start(t, "")
	h := startHost(t, s, "h1")
	r := newReceiver(t, nil)
	var logs syncbuf.Buffer
	startDeliverer(t, s, h, notify.Config{Logger: logger(&logs), Hooks: []notify.Hook{{URL: r.srv.URL, Secret: secret, Events: []string{config.EventTicketIssued}}}})
	ids := events.NewIDSource(rand.Reader)
	forged := &events.Commit{ID: ids.New(time.Now()), Run: "01M8SCNWQYJWJ3R28BZ8ZW2FAK", Step: 1, Kind: events.KindDecide, At: time.Now(),
		Events: []events.Event{events.TicketIssued{ID: ids.New(time.Now()), CallID: "a", Tool: "bash", Kind: events.TicketPermission, Project: "p1"}}}
	data, err := events.Marshal(forged)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.JS.Publish(ctxT(t), events.RunSubject(forged.Run), data); err != nil {
		t.Fatal(err)
	}
	_, ticket := askingRun(t, h, "p1", "ask me")
	got := r.waitFor(t, 1)
	waitAcked(t, s, h)
	if len(r.requests()) != 1 || got[0].payload(t).Ticket != ticket {
		t.Errorf("delivered %d events, the first for ticket %s; want only the real ticket %s", len(r.requests()), got[0].payload(t).Ticket, ticket)
	}
	if !strings.Contains(logs.String(), "not delivering an event the projection does not hold") {
		t.Errorf("the skipped commit is not logged:\n%s", logs.String())
	}
}
