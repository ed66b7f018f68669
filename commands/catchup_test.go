package commands_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/projection"
	"github.com/stepgate/stepgate/step/steptest"
)

// startBehind starts a host whose projector does not follow the stream's
// tail (and whose sweeper runs once an hour): it sees other hosts' commits
// only when it asks for them, so it is behind whenever a test wants it to be.
func startBehind(t *testing.T, s *steptest.Server, reg *executor.Registry, host string) *commands.Host {
	t.Helper()
	return startBehindLeased(t, s, reg, host, commands.LeaseConfig{})
}

// startBehindLeased is startBehind with lease configuration lc.
func startBehindLeased(t *testing.T, s *steptest.Server, reg *executor.Registry, host string, lc commands.LeaseConfig) *commands.Host {
	t.Helper()
	ctx := ctxT(t)
	h, err := commands.StartHost(ctx, s.JS, reg, commands.HostConfig{StateDir: t.TempDir(), Engine: commands.Config{Host: host},
		Projector: projection.Options{NoTail: true}, SweepInterval: time.Hour, Lease: lc})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = h.Proj.Sync(ctx, h.Log) // Close would wait for commits no tail brings
		if err := h.Close(); err != nil {
			t.Errorf("close host %s: %v", host, err)
		}
	})
	return h
}

// syncNow makes h fold everything committed so far.
func syncNow(t *testing.T, h *commands.Host) {
	t.Helper()
	if err := h.Proj.Sync(ctxT(t), h.Log); err != nil {
		t.Fatal(err)
	}
}

func echoFx(n int) []commands.CallRequest {
	return []commands.CallRequest{call(fmt.Sprintf("c%d", n), "echo_fx", text{fmt.Sprintf("step %d", n)})}
}

// Consecutive steps alternate between a host that is up to date and one that
// is behind: each lands on a host that has not folded the step before it
// (committed and answered by the other a moment ago), and each succeeds —
// and so does ending the run on the host that is behind.
func TestStepOnTheHostThatIsBehind(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	reg := registry(t, &cnt)
	ha, hb := startHost(t, s, reg, "a"), startBehind(t, s, reg, "b")
	ctx := ctxT(t)
	info, err := ha.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	syncNow(t, hb) // hb knows the run, then falls behind
	for n := 1; n <= 10; n++ {
		h := ha
		if n%2 == 0 {
			h = hb
		}
		out, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: n, Calls: echoFx(n)})
		if err != nil {
			t.Fatalf("step %d: %v", n, err)
		}
		if want := fmt.Sprintf("step %d", n); !out.Final || out.Results[0].Content != want {
			t.Fatalf("step %d: %+v, want final with %q", n, out, want)
		}
	}
	if _, err := ha.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 11, Calls: echoFx(11)}); err != nil {
		t.Fatal(err)
	}
	sum, err := hb.EndRun(ctx, commands.EndRunRequest{Run: info.Run})
	if err != nil {
		t.Fatalf("end the run on the host that is behind: %v", err)
	}
	if sum.Steps != 11 || sum.Status != projection.StatusEnded {
		t.Errorf("ended run: %+v, want 11 steps, ended", sum)
	}
}

// The host that is behind has folded everything but a catalogue commit made
// on the other host: it decides the next step, its commit loses the race to
// that catalogue, and it decides again and commits instead of answering
// conflict.
func TestStepThatLosesTheRaceToAnotherCommitOfTheRun(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	reg := registry(t, &cnt)
	ha, hb := startHost(t, s, reg, "a"), startBehind(t, s, reg, "b")
	ctx := ctxT(t)
	info, err := ha.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ha.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1, Calls: echoFx(1)}); err != nil {
		t.Fatal(err)
	}
	syncNow(t, hb)
	lint := lintTool(t, "v1")
	if _, err := ha.RegisterTools(ctx, commands.RegisterRequest{Scope: "plugin-a", Tools: []descriptor.Descriptor{lint.Descriptor()}}); err != nil {
		t.Fatal(err)
	}
	ha.Install("plugin-a", lint)
	hb.Install("plugin-a", lint)
	if cat := catalogOf(t, ha, info.Run); cat["lint"] == "" {
		t.Fatalf("catalogue after the registration: %v, want lint", cat)
	}
	out, err := hb.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 2,
		Calls: []commands.CallRequest{call("l", "lint", text{"."}), echoFx(2)[0]}})
	if err != nil {
		t.Fatalf("step 2 on the host that had not folded the catalogue: %v", err)
	}
	if got := results(out); !cmp.Equal(got, []string{"l: linted by v1", "c2: step 2"}) {
		t.Errorf("step 2: %q, want the lint the catalogue advertised and the echo", got)
	}
}

// Tickets and replies move between two hosts that are both behind: a
// ticket issued on one is answered on the other, which has folded only the
// step's decide commit, or nothing of the step; the next step goes to the
// host that issued the ticket but has not folded the reply. Every request
// takes effect.
func TestReplyOnTheHostThatIsBehind(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	reg := registry(t, &cnt)
	ha, hb := startBehind(t, s, reg, "a"), startBehind(t, s, reg, "b")
	ctx := ctxT(t)
	run, out := awaiting(t, ha, "p1", call("a", "count_fx", text{"ask me"}), call("b", "count_fx", text{"plain"}))
	if len(out.Tickets) != 1 {
		t.Fatalf("step 1: %+v, want one ticket", out)
	}
	stored, err := ha.Log.ReadRun(ctx, run, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != 3 {
		t.Fatalf("run holds %d commits, want start, decide and settle", len(stored))
	}
	for _, c := range stored[:2] { // hb folds the start and the decide, not the settle
		if err := hb.Proj.ApplyOwn(c.Seq, c.Commit); err != nil {
			t.Fatal(err)
		}
	}
	res, err := hb.Reply(ctx, commands.ReplyRequest{Ticket: out.Tickets[0].ID, Reply: "once", Principal: "ops"})
	if err != nil {
		t.Fatalf("reply on the host that had not folded the settle: %v", err)
	}
	if res.Outcome == nil || !cmp.Equal(results(res.Outcome), []string{"a: ask me", "b: plain"}) {
		t.Errorf("reply outcome: %+v, want the step final with both results", res.Outcome)
	}

	// Step 2 asks again on ha; hb has folded none of it.
	out, err = ha.SubmitStep(ctx, commands.SubmitStepRequest{Run: run, Step: 2,
		Calls: []commands.CallRequest{call("c", "count_fx", text{"ask again"})}})
	if err != nil || len(out.Tickets) != 1 {
		t.Fatalf("step 2: %+v, %v; want one ticket", out, err)
	}
	if res, err = hb.Reply(ctx, commands.ReplyRequest{Ticket: out.Tickets[0].ID, Run: run, Reply: "once", Principal: "ops"}); err != nil {
		t.Fatalf("reply to a ticket the host had not folded: %v", err)
	}
	if res.Outcome == nil || !cmp.Equal(results(res.Outcome), []string{"c: ask again"}) {
		t.Errorf("reply outcome: %+v", res.Outcome)
	}
	o, err := ha.AwaitStep(ctx, commands.AwaitRequest{Run: run, Step: 2})
	if err != nil || !cmp.Equal(results(o), []string{"c: ask again"}) {
		t.Errorf("await step 2 on a: %+v, %v", o, err)
	}
	if _, err := ha.SubmitStep(ctx, commands.SubmitStepRequest{Run: run, Step: 3, Calls: echoFx(3)}); err != nil {
		t.Errorf("step 3 on a: %v", err)
	}
}

// The tool of a pending ticket is replaced on one host; the reply lands on a
// host that has not folded the replacement. It is refused as stale, as on the
// host that made the replacement, and the old tool never runs for it.
func TestReplyOnTheHostThatIsBehindTheRegistry(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	reg := registry(t, &cnt)
	ha, hb := startHost(t, s, reg, "a"), startBehind(t, s, reg, "b")
	ctx := ctxT(t)
	v1, v2 := lintTool(t, "v1"), lintTool(t, "v2")
	if _, err := ha.RegisterTools(ctx, commands.RegisterRequest{Scope: "plugin-a", Tools: []descriptor.Descriptor{v1.Descriptor()}}); err != nil {
		t.Fatal(err)
	}
	ha.Install("plugin-a", v1)
	hb.Install("plugin-a", v1)
	info, err := ha.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir(),
		Rules: []gate.Rule{{Action: "lint", Resource: "*", Effect: gate.Ask}}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := ha.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1,
		Calls: []commands.CallRequest{call("l", "lint", text{"."})}})
	if err != nil || len(out.Tickets) != 1 {
		t.Fatalf("lint under an ask rule: %+v, %v; want one ticket", out, err)
	}
	syncNow(t, hb)
	if _, err := ha.RegisterTools(ctx, commands.RegisterRequest{Scope: "plugin-b", Tools: []descriptor.Descriptor{v2.Descriptor()}}); err != nil {
		t.Fatal(err)
	}
	ha.Install("plugin-b", v2)
	hb.Install("plugin-b", v2)
	res, err := hb.Reply(ctx, commands.ReplyRequest{Ticket: out.Tickets[0].ID, Reply: "once", Principal: "ops"})
	if got := commands.Code(err); got != commands.CodeTicketStale {
		t.Errorf("reply on the host behind the replacement = %+v, %v (code %q), want %q", res, err, got, commands.CodeTicketStale)
	}
}
