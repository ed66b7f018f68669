package commands_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor/builtin"
	"github.com/stepgate/stepgate/projection"
	"github.com/stepgate/stepgate/step/steptest"
)

// forkSource starts a run with askRules as its overrides and gives it four
// final steps: a side-effecting and a read-only call (two commits), a call
// that asked and a person approved, a todo list (run state), and one more
// read-only call.
func forkSource(t *testing.T, h *commands.Host) string {
	t.Helper()
	ctx := ctxT(t)
	info, err := h.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir(), Project: "pf", Rules: askRules})
	if err != nil {
		t.Fatal(err)
	}
	submit := func(n int, calls ...commands.CallRequest) *commands.StepOutcome {
		t.Helper()
		out, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: n, Calls: calls})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	submit(1, call("a", "count_fx", text{"one"}), call("b", "count", text{"two"}))
	out := submit(2, call("c", "count_fx", text{"ask me"}))
	if out.Final || len(out.Tickets) != 1 {
		t.Fatalf("step 2: final=%v tickets=%d, want one ticket", out.Final, len(out.Tickets))
	}
	if _, err := h.Reply(ctx, commands.ReplyRequest{Ticket: out.Tickets[0].ID, Reply: events.ReplyOnce, Principal: "ops"}); err != nil {
		t.Fatal(err)
	}
	submit(3, call("d", "todowrite", builtin.TodoInput{Todos: []builtin.Todo{{Content: "fork it", Status: "in_progress", Priority: "high"}}}))
	submit(4, call("e", "count", text{"four"}))
	return info.Run
}

// results of every call of the run's first n steps, by step.
func stepResults(r *projection.Run, n int) [][]*events.ToolResultRecorded {
	var out [][]*events.ToolResultRecorded
	for _, s := range r.Steps[:n] {
		var rs []*events.ToolResultRecorded
		for _, c := range s.Calls {
			rs = append(rs, c.Result)
		}
		out = append(out, rs)
	}
	return out
}

// verdicts of every call of the run's first n steps, by step.
func stepVerdicts(r *projection.Run, n int) [][]*events.PermissionDecided {
	var out [][]*events.PermissionDecided
	for _, s := range r.Steps[:n] {
		var ds []*events.PermissionDecided
		for _, c := range s.Calls {
			ds = append(ds, c.Decision)
		}
		out = append(out, ds)
	}
	return out
}

// A fork at step 3 holds the source's first three steps — the same calls,
// verdicts, results and run state — without running any tool again, is
// pinned to the source's rules (a call its run overrides ask for asks in
// the fork too), runs its step 4 like any run, reads the same on a host
// that folds the log afresh, and can be forked in its turn.
func TestForkCopiesStepsWithoutRunningThem(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	reg := registry(t, &cnt)
	h := startHost(t, s, reg, "h1")
	ctx := ctxT(t)
	srcID := forkSource(t, h)
	ranFx, ranRO := cnt.SideEffecting.Load(), cnt.ReadOnly.Load()

	res, err := h.Fork(ctx, commands.ForkRequest{Run: srcID, At: 3})
	if err != nil {
		t.Fatal(err)
	}
	if fx, ro := cnt.SideEffecting.Load(), cnt.ReadOnly.Load(); fx != ranFx || ro != ranRO {
		t.Fatalf("forking ran tools: side-effecting %d→%d, read-only %d→%d", ranFx, fx, ranRO, ro)
	}
	src, fork := shown(t, h, srcID), shown(t, h, res.Run)
	t.Logf("fork %s of %s at %d (commit %s): %d steps, %d commits", res.Run, res.ForkedFrom.Run, res.ForkedFrom.Step, res.ForkedFrom.Commit, len(fork.Steps), fork.Commits)
	if res.Steps != 3 || len(fork.Steps) != 3 || fork.Status != projection.StatusRunning {
		t.Fatalf("fork: answer says %d steps; projection %d steps, status %s; want 3, running", res.Steps, len(fork.Steps), fork.Status)
	}
	if diff := cmp.Diff(stepResults(src, 3), stepResults(fork, 3)); diff != "" {
		t.Errorf("the fork's results differ from the source's (-source +fork):\n%s", diff)
	}
	if diff := cmp.Diff(stepVerdicts(src, 3), stepVerdicts(fork, 3)); diff != "" {
		t.Errorf("the fork's verdicts differ from the source's (-source +fork):\n%s", diff)
	}
	if diff := cmp.Diff(src.State, fork.State); diff != "" {
		t.Errorf("the fork's run state differs (-source +fork):\n%s", diff)
	}
	want := src.Snapshot
	want.ForkedFrom = &events.ForkedFrom{Run: srcID, Step: 3, Commit: res.ForkedFrom.Commit}
	if diff := cmp.Diff(want, fork.Snapshot); diff != "" {
		t.Errorf("the fork's snapshot is not the source's (-want +got):\n%s", diff)
	}
	if len(fork.Tickets) != 0 || fork.Steps[1].Calls[0].Attempts != 0 {
		t.Errorf("the fork asked again or ran: tickets %d, attempts %d", len(fork.Tickets), fork.Steps[1].Calls[0].Attempts)
	}

	out, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: res.Run, Step: 4,
		Calls: []commands.CallRequest{call("x", "count_fx", text{"other"}), call("y", "count_fx", text{"ask again"})}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Final || len(out.Tickets) != 1 || cnt.SideEffecting.Load() != ranFx+1 {
		t.Fatalf("fork's step 4: final=%v tickets=%d, side effects %d; want the allowed call run and the source's ask rule asking", out.Final, len(out.Tickets), cnt.SideEffecting.Load()-ranFx)
	}

	h2 := startHost(t, s, reg, "h2") // a host folding the log afresh
	caughtUp(t, h, h2)
	if diff := cmp.Diff(shown(t, h, res.Run), shown(t, h2, res.Run)); diff != "" {
		t.Errorf("the fork on a host that folded the log afresh (-h1 +h2):\n%s", diff)
	}

	again, err := h2.Fork(ctx, commands.ForkRequest{Run: res.Run, At: 2})
	if err != nil {
		t.Fatalf("fork of the fork: %v", err)
	}
	grand := shown(t, h2, again.Run)
	if diff := cmp.Diff(stepResults(src, 2), stepResults(grand, 2)); diff != "" || len(grand.Steps) != 2 {
		t.Errorf("the fork of the fork (%d steps) differs from the source (-source +fork):\n%s", len(grand.Steps), diff)
	}
	if f := grand.Snapshot.ForkedFrom; f == nil || f.Run != res.Run || f.Step != 2 {
		t.Errorf("the fork of the fork names %+v, want the fork at step 2", f)
	}
	if cnt.SideEffecting.Load() != ranFx+1 || cnt.ReadOnly.Load() != ranRO {
		t.Errorf("tools ran for a fork: side-effecting %d, read-only %d more", cnt.SideEffecting.Load()-ranFx-1, cnt.ReadOnly.Load()-ranRO)
	}
}

// A fork read back from this host's checkpoint after a restart is the fork
// it committed (forked_from included), and takes its next step.
func TestForkSurvivesARestart(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	reg := registry(t, &cnt)
	dir := t.TempDir()
	h := startHostIn(t, s, reg, "h", dir)
	ctx := ctxT(t)
	res, err := h.Fork(ctx, commands.ForkRequest{Run: forkSource(t, h), At: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := shown(t, h, res.Run)
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	h = startHostIn(t, s, reg, "h", dir)
	if diff := cmp.Diff(want, shown(t, h, res.Run)); diff != "" {
		t.Errorf("the fork after a restart (-before +after):\n%s", diff)
	}
	out, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: res.Run, Step: 3, Calls: []commands.CallRequest{call("n", "count", text{"next"})}})
	if err != nil || !out.Final || out.Results[0].Content != "next" {
		t.Fatalf("step 3 of the fork after a restart: %+v, %v", out, err)
	}
}
