package commands_test

import (
	"errors"
	"testing"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection"
	"github.com/stepgate/stepgate/step"
	"github.com/stepgate/stepgate/step/steptest"
)

// deleteAfter deletes every message of run's subject after stream sequence
// after: acknowledged writes lost. It returns the first sequence deleted.
func deleteAfter(t *testing.T, s *steptest.Server, h *commands.Host, run string, after uint64) uint64 {
	t.Helper()
	first := uint64(0)
	for {
		seq, err := h.Log.SubjectLastSeq(ctxT(t), events.RunSubject(run))
		if err != nil {
			t.Fatal(err)
		}
		if seq <= after {
			return first
		}
		deleteSeq(t, s, seq)
		first = seq
	}
}

func deleteSeq(t *testing.T, s *steptest.Server, seq uint64) {
	t.Helper()
	ctx := ctxT(t)
	stream, err := s.JS.Stream(ctx, step.DefaultStream)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.DeleteMsg(ctx, seq); err != nil {
		t.Fatalf("delete stream sequence %d: %v", seq, err)
	}
}

func shown(t *testing.T, h *commands.Host, run string) *projection.Run {
	t.Helper()
	r, err := h.Show(ctxT(t), commands.ShowRequest{Run: run})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func wantDiverged(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, commands.ErrRunDiverged) || commands.Code(err) != commands.CodeRunDiverged {
		t.Fatalf("%s on a diverged run: %v (code %q), want %s", what, err, commands.Code(err), commands.CodeRunDiverged)
	}
}

// Host a commits step 3 of a run (its side effect runs); the stream loses
// that acknowledged message; host b, which had folded only up to step 2,
// commits step 3 with the older expectation, and the CAS lets it through
// (the subject's last sequence is step 2's again). b's commit names step 2's
// commit as its predecessor while a holds its own step 3: a's fold marks the
// run diverged, and from then on a refuses every step and the end — nothing
// runs again. A rebuild of the stream, where the lost write left no trace,
// does not see it: a's projection and a rebuild differ, which verify reports.
func TestChainCatchesALostWriteTheCASLetThrough(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	reg := registry(t, &cnt)
	ha, hb := startHost(t, s, reg, "a"), startBehind(t, s, reg, "b")
	ctx := ctxT(t)
	info, err := ha.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	fx := func(int) []commands.CallRequest { return []commands.CallRequest{call("c", "count_fx", text{"step"})} }
	for n := 1; n <= 2; n++ {
		if _, err := ha.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: n, Calls: fx(n)}); err != nil {
			t.Fatal(err)
		}
	}
	syncNow(t, hb) // b has folded step 2, then falls behind
	b := shown(t, hb, info.Run)
	step2 := b.LastCommit
	if _, err := ha.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 3, Calls: fx(3)}); err != nil {
		t.Fatal(err)
	}
	mine := shown(t, ha, info.Run).LastCommit
	lost := deleteAfter(t, s, ha, info.Run, b.LastSeq) // step 3's decide and settle
	if _, err := hb.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 3, Calls: fx(3)}); err != nil {
		t.Fatalf("b commits step 3 on the history that lost a's: %v", err)
	}
	if got := cnt.SideEffecting.Load(); got != 4 {
		t.Fatalf("%d side effects, want 4 (steps 1 to 3 on a, step 3 again on b, which never saw a's)", got)
	}
	caughtUp(t, hb, ha)
	r := shown(t, ha, info.Run)
	d := r.Diverged
	if d == nil {
		t.Fatalf("a folded b's step 3 after its own: not diverged (steps %d, last commit %s)", len(r.Steps), r.LastCommit)
	}
	if d.Want != mine || d.Got != step2 || d.Step != 3 || d.Host != "b" || d.Seq <= lost {
		t.Fatalf("divergence %+v; want b's step 3 naming step 2's %s, after a's %s (lost from %d)", d, step2, mine, lost)
	}
	t.Logf("a: %s", d)
	before := cnt.SideEffecting.Load()
	_, err = ha.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 4, Calls: fx(4)})
	wantDiverged(t, "step 4", err)
	t.Logf("step 4 on a: %v", err)
	_, err = ha.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 3, Calls: fx(3)})
	wantDiverged(t, "step 3 again", err)
	_, err = ha.EndRun(ctx, commands.EndRunRequest{Run: info.Run, Cause: events.CauseCompleted})
	wantDiverged(t, "end", err)
	if got := cnt.SideEffecting.Load(); got != before {
		t.Fatalf("%d side effects after the divergence was seen, want none", got-before)
	}
	all, err := ha.Proj.All()
	if err != nil {
		t.Fatal(err)
	}
	last, err := ha.Log.LastSeq(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rebuilt, err := projection.Rebuild(ctx, ha.Log, last)
	if err != nil {
		t.Fatal(err)
	}
	if all[info.Run].Diverged == nil || rebuilt.Runs[info.Run].Diverged != nil {
		t.Fatalf("diverged: a's projection %v, a rebuild %v; want a's only (the stream kept no trace of the lost write)",
			all[info.Run].Diverged, rebuilt.Runs[info.Run].Diverged)
	}
}

// A write lost in the middle (step 2's settle) of a run's history leaves its trace in the
// stream: the commit after it names it. A rebuild (what verify folds) marks
// the run diverged, and so does a host that folds the stream from the start.
func TestChainRebuildCatchesALostWriteInTheMiddle(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	reg := registry(t, &cnt)
	ha := startHost(t, s, reg, "a")
	ctx := ctxT(t)
	info, err := ha.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var lost uint64
	for n := 1; n <= 3; n++ {
		if _, err := ha.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: n, Calls: echoFx(n)}); err != nil {
			t.Fatal(err)
		}
		if n == 2 {
			lost = shown(t, ha, info.Run).LastSeq
		}
	}
	deleteSeq(t, s, lost)
	last, err := ha.Log.LastSeq(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rebuilt, err := projection.Rebuild(ctx, ha.Log, last)
	if err != nil {
		t.Fatal(err)
	}
	r := rebuilt.Runs[info.Run]
	if r == nil || r.Diverged == nil || r.Diverged.Step != 3 || len(r.Steps) != 2 || r.Steps[1].Final {
		t.Fatalf("rebuild after step 2's settle was lost: %+v", r)
	}
	if rebuilt.Quarantine.Total != 0 {
		t.Fatalf("a divergence is not a quarantine: %+v", rebuilt.Quarantine)
	}
	hc := startHost(t, s, reg, "c")
	caughtUp(t, ha, hc)
	_, err = hc.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 4, Calls: echoFx(4)})
	wantDiverged(t, "a host folding the stream afresh", err)
}

// The same lost write under a pending ticket: a reply on the host that sees
// the divergence is refused, and the approved call never runs.
func TestChainRefusesAReplyOnADivergedRun(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	reg := registry(t, &cnt)
	ha, hb := startHost(t, s, reg, "a"), startBehind(t, s, reg, "b")
	ctx := ctxT(t)
	info, err := ha.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir(), Rules: askRules})
	if err != nil {
		t.Fatal(err)
	}
	syncNow(t, hb)
	started := shown(t, hb, info.Run).LastSeq
	calls := []commands.CallRequest{call("a", "count_fx", text{"ask me"})}
	out, err := ha.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1, Calls: calls})
	if err != nil || len(out.Tickets) != 1 {
		t.Fatalf("step 1 on a: %+v, %v; want one ticket", out, err)
	}
	deleteAfter(t, s, ha, info.Run, started)
	if _, err := hb.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1, Calls: calls}); err != nil {
		t.Fatal(err)
	}
	caughtUp(t, hb, ha)
	_, err = ha.Reply(ctx, commands.ReplyRequest{Ticket: out.Tickets[0].ID, Reply: events.ReplyOnce, Principal: "ops"})
	wantDiverged(t, "reply", err)
	if got := cnt.SideEffecting.Load(); got != 0 {
		t.Fatalf("%d side effects, want none", got)
	}
}
