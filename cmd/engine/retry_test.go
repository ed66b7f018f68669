package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/cmd/engine/hosting"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/gate"
)

// twoServed is an engine on an embedded server with a listener and a second
// host on it, both serving the stepgate service, and a client of it whose every request is sent again
// every 20ms: the copies of one request must act once.
type twoServed struct {
	e   *hosting.Embedded
	h2  *commands.Host
	url string
	c   *client
}

func serveForTest(t *testing.T) *twoServed {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	e, err := startEmbedded(ctx, hosting.Options{DataDir: t.TempDir(), Listen: "127.0.0.1:0", Log: log, TestTools: true})
	if err != nil {
		t.Fatal(err)
	}
	stop, err := serveAPI(ctx, e.Conn, e.Host, "0.0.0-dev", log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = stop(); _ = e.Close() })
	s := &twoServed{e: e, url: e.Server.ClientURL()}
	// A second host on the same server serves the same service: copies of
	// a request reach either, so the one not running it answers with the
	// echo (conflict, ticket resolved, run not active).
	nc2, err := e.Server.Connect()
	if err != nil {
		t.Fatal(err)
	}
	if s.h2, err = hosting.StartHost(ctx, nc2, hosting.Options{Version: version(), DataDir: t.TempDir(), HostName: "h2", Log: log, TestTools: true}); err != nil {
		t.Fatal(err)
	}
	stop2, err := serveAPI(ctx, nc2, s.h2, "0.0.0-dev", log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = stop2(); _ = s.h2.Close(); nc2.Close() })
	cf := connFlags{natsURL: s.url, timeout: 30 * time.Second}
	if s.c, err = cf.dialClient(log, sgclient.WithAttemptWait(func(string, int) time.Duration { return 20 * time.Millisecond })); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.c.Close)
	return s
}

// caughtUp waits until the second host has folded what the first committed
// (two hosts answering one run are issue 10 §0's business, not this test's).
func (s *twoServed) caughtUp(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	last, err := s.e.Host.Log.LastSeq(ctx)
	if err == nil {
		err = s.h2.Proj.WaitFor(ctx, last)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// gateFile creates a file the wait tools wait on and removes it after d.
func gateFile(t *testing.T, ws string, d time.Duration) {
	t.Helper()
	p := filepath.Join(ws, "gate")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(d, func() { _ = os.Remove(p) })
}

func waitCall(id, text string) commands.CallRequest {
	b, _ := json.Marshal(map[string]string{"text": text, "path": "gate"})
	return commands.CallRequest{ID: id, Tool: "wait_fx", Args: b}
}

// Every request sent again every 20ms, while a side-effecting call runs
// for a second, while an approved call runs, and for the end: one run, each
// call started once, the step's results as recorded, the reply and the end
// answered as success.
func TestCopiesOfARequestActOnce(t *testing.T) {
	s := serveForTest(t)
	ctx := context.Background()
	ws := t.TempDir()

	info, err := s.c.StartRun(ctx, commands.StartRunRequest{Location: ws, Rules: []gate.Rule{{Action: "wait_fx", Resource: "ask*", Effect: gate.Ask}}})
	if err != nil {
		t.Fatal(err)
	}
	s.caughtUp(t)
	gateFile(t, ws, time.Second)
	out, err := s.c.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1, Calls: []commands.CallRequest{waitCall("a", "ran")}})
	if err != nil {
		t.Fatalf("a submit sent every 20ms while its call runs for 1s: %v", err)
	}
	if !out.Final || len(out.Results) != 1 || out.Results[0].Content != "ran" {
		t.Fatalf("outcome %+v, want the call's result", out)
	}

	s.caughtUp(t)
	out, err = s.c.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 2, Calls: []commands.CallRequest{waitCall("b", "ask me")}})
	if err != nil || out.Final || len(out.Tickets) != 1 {
		t.Fatalf("a step that asks: %+v %v", out, err)
	}
	s.caughtUp(t)
	gateFile(t, ws, time.Second)
	res, err := s.c.Reply(ctx, commands.ReplyRequest{Ticket: out.Tickets[0].ID, Reply: events.ReplyOnce, Principal: "bob"})
	if err != nil {
		t.Fatalf("a reply sent every 20ms while the approved call runs for 1s: %v", err)
	}
	if !res.Approved || res.Outcome == nil || !res.Outcome.Final || res.Outcome.Results[0].Content != "ask me" {
		t.Fatalf("reply result %+v, want approved with the step's outcome", res)
	}

	s.caughtUp(t)
	sum, err := s.c.EndRun(ctx, commands.EndRunRequest{Run: info.Run})
	if err != nil || sum.ID != info.Run || sum.Steps != 2 {
		t.Fatalf("end sent every 20ms: %+v %v", sum, err)
	}

	runs, err := s.c.Runs(ctx)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs: %d (%v), want the one", len(runs), err)
	}
	r, err := s.c.Show(ctx, commands.ShowRequest{Run: info.Run})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range r.Steps {
		if c := st.Calls[0]; c.Attempts != 1 {
			t.Errorf("step %d's call started %d times, want once", st.N, c.Attempts)
		}
	}
}

// A reply whose ticket someone else resolved is reported as it is, even
// when its copy is what gets the answer.
func TestReplyToAResolvedTicketIsReported(t *testing.T) {
	s := serveForTest(t)
	ctx := context.Background()
	ws := t.TempDir()
	info, err := s.c.StartRun(ctx, commands.StartRunRequest{Location: ws, Rules: []gate.Rule{{Action: "wait_fx", Resource: "*", Effect: gate.Ask}}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.c.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1, Calls: []commands.CallRequest{waitCall("a", "x")}})
	if err != nil || len(out.Tickets) != 1 {
		t.Fatalf("%+v %v", out, err)
	}
	if _, err := s.e.Host.Reply(ctx, commands.ReplyRequest{Ticket: out.Tickets[0].ID, Reply: events.ReplyReject, Message: "no", Principal: "alice"}); err != nil {
		t.Fatal(err)
	}
	_, err = s.c.Reply(ctx, commands.ReplyRequest{Ticket: out.Tickets[0].ID, Run: info.Run, Reply: events.ReplyOnce, Principal: "bob"})
	if !errors.Is(err, commands.ErrTicketResolved) {
		t.Fatalf("a reply to alice's resolved ticket = %v, want ticket resolved", err)
	}
}

// With no engine serving, a client gives up at its --timeout with a clear
// message; the NATS server being down at first is ridden out the same way.
func TestClientGivesUpAtItsTimeout(t *testing.T) {
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := serveForTest(t)
	lonely := connFlags{natsURL: srv.url, timeout: 300 * time.Millisecond}
	c, err := lonely.dialClient(log)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Nobody serves this subject: no responders, again and again.
	err = c.Do(ctx, "no_such_endpoint", struct{}{}, &struct{}{})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "gave up after 300ms") || !strings.Contains(err.Error(), "no stepgate service is reachable") {
		t.Fatalf("no service: %v", err)
	}

	nobody := connFlags{natsURL: "nats://" + freePort(t), timeout: 300 * time.Millisecond}
	c, err = nobody.dialClient(log)
	if err != nil {
		t.Fatalf("a client starts while NATS is down: %v", err)
	}
	defer c.Close()
	if _, err := c.Runs(ctx); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "gave up") {
		t.Fatalf("no NATS server: %v", err)
	}
	if c.Conn().Status() == nats.CLOSED {
		t.Fatal("the connection gave up; it must keep trying")
	}
}

// freePort returns a loopback address nobody listens on.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
