package commands_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/step/steptest"
)

// await_step, show, tickets and the runs list on the host that is behind
// answer with what the other host committed a moment ago.
func TestReadsOnTheHostThatIsBehind(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	reg := registry(t, &cnt)
	ha, hb := startHost(t, s, reg, "a"), startBehind(t, s, reg, "b")
	ctx := ctxT(t)
	run, _ := awaiting(t, ha, "p1", call("a", "count_fx", text{"ask me"}))
	syncNow(t, hb)

	// The ticket is answered on ha and step 2 asks: hb has folded neither.
	pending, err := tickets(ctx, ha, commands.TicketsRequest{Run: run})
	if err != nil || len(pending) != 1 {
		t.Fatalf("tickets on a: %v, %v", pending, err)
	}
	if _, err := ha.Reply(ctx, commands.ReplyRequest{Ticket: pending[0].ID, Reply: "once", Principal: "ops"}); err != nil {
		t.Fatal(err)
	}
	o, err := hb.AwaitStep(ctx, commands.AwaitRequest{Run: run, Step: 1})
	if err != nil || !o.Final || o.Results[0].Content != "ask me" {
		t.Fatalf("await step 1 on b: %+v, %v; want it final", o, err)
	}
	if _, err := ha.SubmitStep(ctx, commands.SubmitStepRequest{Run: run, Step: 2,
		Calls: []commands.CallRequest{call("c", "count_fx", text{"ask again"})}}); err != nil {
		t.Fatal(err)
	}
	other, _ := awaiting(t, ha, "p2", call("d", "count_fx", text{"ask elsewhere"}))

	want, err := ha.Show(ctx, commands.ShowRequest{Run: run})
	if err != nil {
		t.Fatal(err)
	}
	got, err := hb.Show(ctx, commands.ShowRequest{Run: run})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("show on b differs from a (-a +b):\n%s", d)
	}
	for _, req := range []commands.TicketsRequest{{Run: run}, {Run: other}, {}} {
		want, err := ha.Tickets(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := hb.Tickets(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, got); d != "" || len(got.Tickets) == 0 {
			t.Errorf("tickets %+v on b differ from a (-a +b):\n%s", req, d)
		}
	}
	wantRuns, err := ha.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	gotRuns, err := hb.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(wantRuns, gotRuns); d != "" {
		t.Errorf("runs on b differ from a (-a +b):\n%s", d)
	}

	// Await a step hb has not folded: it is there, and it waits.
	waited := make(chan error, 1)
	go func() {
		o, err := hb.AwaitStep(ctx, commands.AwaitRequest{Run: run, Step: 2})
		if err == nil && (!o.Final || o.Results[0].Content != "ask again") {
			err = fmt.Errorf("await step 2 on b: %+v, want it final", o)
		}
		waited <- err
	}()
	pending, err = tickets(ctx, ha, commands.TicketsRequest{Run: run})
	if err != nil || len(pending) != 1 {
		t.Fatalf("tickets on a: %v, %v", pending, err)
	}
	if _, err := ha.Reply(ctx, commands.ReplyRequest{Ticket: pending[0].ID, Reply: "once", Principal: "ops"}); err != nil {
		t.Fatal(err)
	}
	if err := <-waited; err != nil {
		t.Error(err)
	}
}

// The single host's happy path pays no round trip for catching up: a step
// sends the server its commits and nothing else.
func TestHappyPathSendsOnlyItsCommits(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	// Nothing else talks to the server: no follower polls, no sweeper, and
	// no lease (its renewal, once a second, would land inside the count
	// when the steps take longer than that, as under -race on a busy
	// machine).
	h := startBehindLeased(t, s, registry(t, &cnt), "a", commands.LeaseConfig{Off: true})
	ctx := ctxT(t)
	info, err := h.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	const steps = 20
	n := 0
	for _, tc := range []struct {
		tool    string
		commits int
	}{{"echo", 1}, {"echo_fx", 2}} {
		before := s.Conn.Stats().OutMsgs
		for range steps {
			n++
			if _, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: n,
				Calls: []commands.CallRequest{call("c", tc.tool, text{"x"})}}); err != nil {
				t.Fatal(err)
			}
		}
		if got, want := s.Conn.Stats().OutMsgs-before, uint64(steps*tc.commits); got != want {
			t.Errorf("%d steps of %s sent %d messages, want %d: their commits only", steps, tc.tool, got, want)
		}
	}
}

// With its tail, the host's steps still pay no round trip: a step sends
// the server its commits, and the tail adds a pull request per 2,048
// commits delivered, one per pull expiry (20 s), and the deletion of its
// consumer when it is set aside, whatever the number of steps: a bounded
// few, never one per step. Nor does the host receive each of its commits
// twice: the tail, which delivers every commit (the host's own included)
// as the server stores it, is set aside once nearly all it brings is the
// host's own commits, so the host receives each commit's acknowledgement
// and, from the tail, fewer than half as many messages as it made steps.
func TestHappyPathWithItsTailSendsItsCommitsAndAFewPulls(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	ctx := ctxT(t)
	h, err := commands.StartHost(ctx, s.JS, registry(t, &cnt), commands.HostConfig{StateDir: t.TempDir(),
		Engine: commands.Config{Host: "a"}, SweepInterval: time.Hour, Lease: commands.LeaseConfig{Off: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("close host: %v", err)
		}
	})
	info, err := h.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	const steps = 400
	before, received := s.Conn.Stats().OutMsgs, s.Conn.Stats().InMsgs
	for n := 1; n <= steps; n++ {
		if _, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: n,
			Calls: []commands.CallRequest{call("c", "echo", text{"x"})}}); err != nil {
			t.Fatal(err)
		}
	}
	got, in := s.Conn.Stats().OutMsgs-before, s.Conn.Stats().InMsgs-received
	if got < steps || got > steps+5 {
		t.Errorf("%d steps of echo sent %d messages, want their %d commits and at most 5 pull requests", steps, got, steps)
	}
	if in > steps+steps/2 {
		t.Errorf("%d steps of echo made the host receive %d messages, want their %d acknowledgements and fewer than %d from its tail",
			steps, in, steps, steps/2)
	}
	t.Logf("%d steps sent %d messages and received %d", steps, got, in)
}
