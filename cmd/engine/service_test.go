package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/gate"
)

// served is an embedded engine with the stepgate service on it, and a
// client on a connection of its own.
type served struct {
	e      *embedded
	client *client
	nc     *nats.Conn
}

func serveT(t *testing.T) *served {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	e, err := startEmbedded(ctx, hostOptions{dataDir: t.TempDir(), hostName: "h1", log: log, testTools: true})
	if err != nil {
		t.Fatal(err)
	}
	svcCtx, svcCancel := context.WithCancel(context.Background())
	stop, err := serveAPI(svcCtx, e.nc, e.host, version(), log)
	if err != nil {
		svcCancel()
		_ = e.close()
		t.Fatal(err)
	}
	nc, err := e.srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		nc.Close()
		svcCancel()
		if err := stop(); err != nil {
			t.Error(err)
		}
		_ = e.close()
	})
	return &served{e: e, client: &client{nc: nc}, nc: nc}
}

// askStep starts a run whose one bash call waits for a human and returns
// the run and the ticket.
func askStep(t *testing.T, ctx context.Context, c *client) (run, ticket string) {
	t.Helper()
	info, err := c.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir(),
		Rules: []gate.Rule{{Action: "bash", Resource: "*", Effect: gate.Ask}}})
	if err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(map[string]string{"command": "echo released"})
	out, err := c.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1,
		Calls: []commands.CallRequest{{ID: "c1", Tool: "bash", Args: args}}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Final || len(out.Tickets) != 1 {
		t.Fatalf("step 1 = %+v, want one ticket", out)
	}
	return info.Run, out.Tickets[0].ID
}

// 10,000 clients awaiting one step hold none of the service's handler
// slots: the reply that finishes the step is answered, and every waiter
// gets the final step.
func TestAwaitFloodLeavesTheServiceAnswering(t *testing.T) {
	s := serveT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	run, ticket := askStep(t, ctx, s.client)

	const waiters = 10000
	var (
		wg      sync.WaitGroup
		final   atomic.Int64
		started atomic.Int64
		errs    = make(chan error, waiters)
	)
	for range waiters {
		wg.Go(func() {
			started.Add(1)
			out, err := s.client.AwaitStep(ctx, commands.AwaitRequest{Run: run, Step: 1, Timeout: "80s"})
			switch {
			case err != nil:
				errs <- err
			case !out.Final || len(out.Results) != 1 || out.Results[0].Content == "":
				errs <- errors.New("an awaited outcome that is not the final step")
			default:
				final.Add(1)
			}
		})
	}
	// Let the waiters reach the service: a ticket listing (another endpoint)
	// still answers, within a deadline, while they wait.
	for started.Load() < waiters {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(time.Second)
	lctx, lcancel := context.WithTimeout(ctx, 20*time.Second)
	if _, err := s.client.Tickets(lctx, commands.TicketsRequest{Run: run}); err != nil {
		t.Fatalf("tickets while %d clients await: %v", waiters, err)
	}
	rctx, rcancel := context.WithTimeout(ctx, 20*time.Second)
	res, err := s.client.Reply(rctx, commands.ReplyRequest{Ticket: ticket, Reply: events.ReplyOnce, Principal: "ops"})
	rcancel()
	lcancel()
	if err != nil {
		t.Fatalf("reply while %d clients await: %v", waiters, err)
	}
	if res.Outcome == nil || !res.Outcome.Final {
		t.Fatalf("reply = %+v, want the final step", res)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("a waiter: %v (%d of %d got the final step)", err, final.Load(), waiters)
	}
	if got := final.Load(); got != waiters {
		t.Fatalf("%d of %d waiters got the final step", got, waiters)
	}
	t.Logf("%d waiters got the final step", final.Load())
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
	if err != nil || len(tickets) != 1 {
		t.Fatalf("tickets after the timeouts: %v, %v; want the one ticket still pending", tickets, err)
	}
}
