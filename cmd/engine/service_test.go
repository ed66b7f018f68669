package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"github.com/stepgate/stepgate/cmd/engine/hosting"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
)

// served is an embedded engine with the stepgate service on it, and a
// client on a connection of its own.
type served struct {
	e      *hosting.Embedded
	client *client
	nc     *nats.Conn
	stop   func() error // cancels the service's ctx and waits for it
}

func serveT(t *testing.T) *served {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	e, err := startEmbedded(ctx, hosting.Options{DataDir: t.TempDir(), HostName: "h1", Log: log, TestTools: true})
	if err != nil {
		t.Fatal(err)
	}
	svcCtx, svcCancel := context.WithCancel(context.Background())
	stop, err := serveAPI(svcCtx, e.Conn, e.Host, version(), log)
	if err != nil {
		svcCancel()
		_ = e.Close()
		t.Fatal(err)
	}
	nc, err := e.Server.Connect()
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	var stopErr error
	stopAll := func() error {
		once.Do(func() { svcCancel(); stopErr = stop() })
		return stopErr
	}
	t.Cleanup(func() {
		nc.Close()
		if err := stopAll(); err != nil {
			t.Error(err)
		}
		_ = e.Close()
	})
	return &served{e: e, client: newClient(nc, 0), nc: nc, stop: stopAll}
}

// askStep starts a run whose one bash call waits for a human and returns
// the run and the ticket.
func askStep(t *testing.T, ctx context.Context, c *client) (run, ticket string) {
	t.Helper()
	return askIn(t, ctx, c, "")
}

// 10,000 clients awaiting one step hold none of the service's handler
// slots: another endpoint and the reply that finishes the step are
// answered while they wait, and every waiter gets the final step. (The
// waiters are requests on one reply subscription, not a goroutine each.)
func TestAwaitFloodLeavesTheServiceAnswering(t *testing.T) {
	s := serveT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	run, ticket := askStep(t, ctx, s.client)

	const waiters = 10000
	replies := make(chan *nats.Msg, waiters)
	inbox := nats.NewInbox()
	sub, err := s.nc.ChanSubscribe(inbox+".*", replies)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	body, _ := json.Marshal(commands.AwaitRequest{Run: run, Step: 1, Timeout: "80s"})
	for i := range waiters {
		if err := s.nc.PublishRequest(subjectPrefix+"."+epAwait, fmt.Sprint(inbox, ".", i), body); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.nc.FlushWithContext(ctx); err != nil {
		t.Fatal(err)
	}
	// The service has taken every await_step once a request sent after
	// them is answered: await_step of a step that does not exist is
	// answered at once, on the same endpoint, behind the 10,000.
	probe, _ := json.Marshal(commands.AwaitRequest{Run: run, Step: 2})
	pctx, pcancel := context.WithTimeout(ctx, 30*time.Second)
	msg, err := s.nc.RequestWithContext(pctx, subjectPrefix+"."+epAwait, probe)
	pcancel()
	if err != nil || msg.Header.Get(micro.ErrorCodeHeader) != commands.CodeStepOrder {
		t.Fatalf("await of a step that does not exist, behind %d waiters: %v %v", waiters, err, msg)
	}
	if len(replies) > 0 {
		t.Fatalf("a waiter was answered before the step was final: %q", (<-replies).Data)
	}
	lctx, lcancel := context.WithTimeout(ctx, 20*time.Second)
	if _, err := s.client.Tickets(lctx, commands.TicketsRequest{Run: run}); err != nil {
		t.Fatalf("tickets while %d clients await: %v", waiters, err)
	}
	lcancel()
	rctx, rcancel := context.WithTimeout(ctx, 20*time.Second)
	res, err := s.client.Reply(rctx, commands.ReplyRequest{Ticket: ticket, Reply: events.ReplyOnce, Principal: "ops"})
	rcancel()
	if err != nil {
		t.Fatalf("reply while %d clients await: %v", waiters, err)
	}
	if res.Outcome == nil || !res.Outcome.Final {
		t.Fatalf("reply = %+v, want the final step", res)
	}
	seen := map[string]bool{}
	for len(seen) < waiters {
		select {
		case m := <-replies:
			var out commands.StepOutcome
			if code := m.Header.Get(micro.ErrorCodeHeader); code != "" {
				t.Fatalf("waiter %s: %s: %s", m.Subject, code, m.Header.Get(micro.ErrorHeader))
			}
			if err := json.Unmarshal(m.Data, &out); err != nil || !out.Final || len(out.Results) != 1 || out.Results[0].Content == "" {
				t.Fatalf("waiter %s got %q (%v), want the final step", m.Subject, m.Data, err)
			}
			if seen[m.Subject] {
				t.Fatalf("waiter %s answered twice", m.Subject)
			}
			seen[m.Subject] = true
		case <-ctx.Done():
			t.Fatalf("%d of %d waiters got the final step", len(seen), waiters)
		}
	}
	t.Logf("%d waiters got the final step", len(seen))
}

// A wait has the deadline the client chose; past it the answer is
// await_timeout and the step is untouched. A timeout above the maximum,
// or not a duration, is invalid_input.
func TestAwaitTimesOutWithAStableCode(t *testing.T) {
	s := serveT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	run, _ := askStep(t, ctx, s.client)

	_, err := s.client.AwaitStep(ctx, commands.AwaitRequest{Run: run, Step: 1, Timeout: "200ms"})
	if got := commands.Code(err); got != commands.CodeAwaitTimeout || !errors.Is(err, commands.ErrAwaitTimeout) {
		t.Fatalf("await past its timeout: %v (code %q), want %s", err, got, commands.CodeAwaitTimeout)
	}
	for _, bad := range []string{"2h", "soon", "-1s"} {
		_, err := s.client.AwaitStep(ctx, commands.AwaitRequest{Run: run, Step: 1, Timeout: bad})
		if got := commands.Code(err); got != commands.CodeInvalidInput {
			t.Errorf("timeout %q: %v (code %q), want invalid_input", bad, err, got)
		}
	}
	tickets, err := s.client.Tickets(ctx, commands.TicketsRequest{Run: run})
	if err != nil || len(tickets.Tickets) != 1 {
		t.Fatalf("tickets after the timeouts: %v, %v; want the one ticket still pending", tickets, err)
	}
}

// A service that stops answers the clients still waiting (they may ask
// again elsewhere) and stops: waiters never keep it from stopping.
func TestStoppingServiceAnswersItsWaiters(t *testing.T) {
	s := serveT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	run, _ := askStep(t, ctx, s.client)
	const waiters = 100
	replies := make(chan *nats.Msg, waiters)
	inbox := nats.NewInbox()
	sub, err := s.nc.ChanSubscribe(inbox+".*", replies)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	body, _ := json.Marshal(commands.AwaitRequest{Run: run, Step: 1})
	for i := range waiters {
		if err := s.nc.PublishRequest(subjectPrefix+"."+epAwait, fmt.Sprint(inbox, ".", i), body); err != nil {
			t.Fatal(err)
		}
	}
	// The service took them once a later request on the endpoint is answered.
	if _, err := s.client.AwaitStep(ctx, commands.AwaitRequest{Run: run, Step: 2}); commands.Code(err) != commands.CodeStepOrder {
		t.Fatalf("await of a step that does not exist: %v", err)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- s.stop() }()
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatal("the service did not stop while clients waited")
	}
	for range waiters {
		select {
		case m := <-replies:
			if got := m.Header.Get(micro.ErrorCodeHeader); got != commands.CodeUnavailable {
				t.Fatalf("a waiter of a stopped service got code %q (%q %q), want %s", got, m.Header.Get(micro.ErrorHeader), m.Data, commands.CodeUnavailable)
			}
		case <-ctx.Done():
			t.Fatal("a waiter of a stopped service was not answered")
		}
	}
}

// engine run --wait rides out the await's deadline: it asks again until
// the step is final.
func TestAwaitFinalAsksAgainPastTheTimeout(t *testing.T) {
	s := serveT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	run, ticket := askStep(t, ctx, s.client)
	go func() {
		time.Sleep(300 * time.Millisecond) // several 50ms deadlines
		_, _ = s.client.Reply(ctx, commands.ReplyRequest{Ticket: ticket, Reply: events.ReplyOnce, Principal: "ops"})
	}()
	out, err := awaitFinal(ctx, s.client, commands.AwaitRequest{Run: run, Step: 1, Timeout: "50ms"})
	if err != nil || !out.Final {
		t.Fatalf("awaitFinal = %+v, %v; want the final step", out, err)
	}
}
