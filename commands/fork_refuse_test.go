package commands_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/step/steptest"
)

// A fork is refused, with its code and nothing committed, at step 0, past
// the source's last step, at a step that is not final, of no run and of a
// run that diverged; a fork id that is another run, or another fork, is a
// conflict.
func TestForkRefuses(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	h := startHost(t, s, registry(t, &cnt), "h1")
	ctx := ctxT(t)
	src := forkSource(t, h)
	waiting, _ := awaiting(t, h, "pf", call("w", "count_fx", text{"ask me"}))
	other, err := h.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	prior, err := h.Fork(ctx, commands.ForkRequest{Run: src, At: 2})
	if err != nil {
		t.Fatal(err)
	}
	runs := func() int {
		t.Helper()
		all, err := h.Runs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(all)
	}
	before := runs()
	for _, tc := range []struct {
		what string
		req  commands.ForkRequest
		code string
	}{
		{"step 0", commands.ForkRequest{Run: src, At: 0}, commands.CodeInvalidInput},
		{"past the last step", commands.ForkRequest{Run: src, At: 5}, commands.CodeStepOrder},
		{"a step that is not final", commands.ForkRequest{Run: waiting, At: 1}, commands.CodeStepOrder},
		{"no run", commands.ForkRequest{Run: "01J0000000000000000000000Z", At: 1}, commands.CodeRunNotFound},
		{"a fork id that is not a ULID", commands.ForkRequest{Run: src, At: 1, Fork: "mine"}, commands.CodeInvalidInput},
		{"the source as its own fork", commands.ForkRequest{Run: src, At: 1, Fork: src}, commands.CodeInvalidInput},
		{"a fork id that is another run", commands.ForkRequest{Run: src, At: 1, Fork: other.Run}, commands.CodeConflict},
		{"a fork id that is another fork", commands.ForkRequest{Run: src, At: 3, Fork: prior.Run}, commands.CodeConflict},
	} {
		_, err := h.Fork(ctx, tc.req)
		if got := commands.Code(err); got != tc.code {
			t.Errorf("fork of %s: %v (code %q), want %s", tc.what, err, got, tc.code)
		}
		t.Logf("%s: %v", tc.what, err)
	}
	if got := runs(); got != before {
		t.Errorf("refused forks left %d runs, want %d", got, before)
	}
	if r := shown(t, h, other.Run); len(r.Steps) != 0 || r.Snapshot.ForkedFrom != nil {
		t.Errorf("a refused fork wrote into another run: %d steps, forked_from %v", len(r.Steps), r.Snapshot.ForkedFrom)
	}

	// A forged commit that names another predecessor: the source diverged.
	last := shown(t, h, src)
	forged := events.Commit{ID: events.NewIDSource(nil).New(time.Now()), Run: src, Step: 5, Kind: events.KindStep, At: time.Now().UTC(),
		Prev: last.Steps[0].Host + "-not-the-last-commit", Events: []events.Event{events.ToolCallRequested{CallID: "z", Tool: "count"}}}
	if _, err := h.Log.Commit(ctx, &forged, last.LastSeq); err != nil {
		t.Fatal(err)
	}
	syncNow(t, h)
	if shown(t, h, src).Diverged == nil {
		t.Fatal("the forged commit did not make the source diverge")
	}
	_, err = h.Fork(ctx, commands.ForkRequest{Run: src, At: 2})
	wantDiverged(t, "fork", err)
	t.Logf("diverged: %v", err)
	if got := runs(); got != before {
		t.Errorf("a fork of a diverged run left %d runs, want %d", got, before)
	}
}

// A fork sent again with its id answers the same fork; one that stopped
// halfway (here: its last copied step lost from the log) is finished by
// the next attempt, on any host, without running a tool.
func TestForkWithAnIDIsFinishedNotRepeated(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	reg := registry(t, &cnt)
	h := startHost(t, s, reg, "h1")
	ctx := ctxT(t)
	src := forkSource(t, h)
	ran := cnt.SideEffecting.Load() + cnt.ReadOnly.Load()
	id := events.NewIDSource(nil).New(time.Now())
	req := commands.ForkRequest{Run: src, At: 3, Fork: id}
	first, err := h.Fork(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	whole := shown(t, h, id)
	again, err := h.Fork(ctx, req)
	if err != nil || *again != *first {
		t.Fatalf("the fork sent again: %+v, %v; want %+v", again, err, first)
	}
	if r := shown(t, h, id); r.Commits != whole.Commits {
		t.Fatalf("the fork sent again committed: %d commits, want %d", r.Commits, whole.Commits)
	}

	deleteSeq(t, s, whole.LastSeq) // step 3's copy is lost: a fork stopped after step 2
	h2 := startHost(t, s, reg, "h2")
	if r := shown(t, h2, id); len(r.Steps) != 2 {
		t.Fatalf("the fork on a fresh host holds %d steps, want 2", len(r.Steps))
	}
	done, err := h2.Fork(ctx, req)
	if err != nil || *done != *first {
		t.Fatalf("the stopped fork sent again: %+v, %v; want %+v", done, err, first)
	}
	r := shown(t, h2, id)
	if diff := cmp.Diff(stepResults(shown(t, h2, src), 3), stepResults(r, 3)); diff != "" || len(r.Steps) != 3 || !r.Steps[2].Final {
		t.Errorf("the finished fork (%d steps) differs from the source (-source +fork):\n%s", len(r.Steps), diff)
	}
	if got := cnt.SideEffecting.Load() + cnt.ReadOnly.Load(); got != ran {
		t.Errorf("%d tools ran for the forks, want none", got-ran)
	}
	if _, err := h2.SubmitStep(ctx, commands.SubmitStepRequest{Run: id, Step: 4, Calls: []commands.CallRequest{call("n", "count", text{"next"})}}); err != nil {
		t.Fatalf("step 4 of the finished fork: %v", err)
	}
	if _, err := h2.Fork(ctx, req); !errors.Is(err, commands.ErrConflict) {
		t.Errorf("the fork sent again after its step 4: %v, want a conflict", err)
	}
}
