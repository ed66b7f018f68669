package projection_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection"
	"github.com/stepgate/stepgate/step"
	"github.com/stepgate/stepgate/step/steptest"
)

// writer commits steps of several runs to a real stream.
type writer struct {
	t    *testing.T
	log  *step.Log
	ids  *events.IDSource
	last map[string]uint64
	step map[string]int
	seq  uint64
	// own, when set, folds each commit as its host does (ApplyOwn).
	own *projection.Projector
}

func newWriter(t *testing.T, log *step.Log) *writer {
	return &writer{t: t, log: log, ids: events.NewIDSource(nil), last: map[string]uint64{}, step: map[string]int{}}
}

func (w *writer) commit(c *events.Commit) {
	w.t.Helper()
	seq, err := w.log.Commit(context.Background(), c, w.last[c.Run])
	if err != nil {
		w.t.Fatal(err)
	}
	w.last[c.Run], w.seq = seq, seq
	if w.own != nil {
		if err := w.own.ApplyOwn(seq, c); err != nil {
			w.t.Fatal(err)
		}
	}
}

func (w *writer) start() string {
	run := w.ids.New(time.Now())
	w.commit(&events.Commit{ID: w.ids.New(time.Now()), Run: run, Kind: events.KindStart, At: at,
		Events: []events.Event{events.RunStarted{Agent: "build", Location: "/w"}}})
	return run
}

func (w *writer) echo(run string) {
	w.step[run]++
	n := w.step[run]
	w.commit(&events.Commit{ID: w.ids.New(time.Now()), Run: run, Step: n, Kind: events.KindStep, At: at,
		Events: []events.Event{
			events.ToolCallRequested{CallID: "c", Tool: "echo"},
			events.PermissionDecided{CallID: "c", Verdict: events.VerdictAllow},
			events.ToolResultRecorded{CallID: "c", Parts: []events.Part{{Type: "text", Text: fmt.Sprint("step ", n)}}},
			events.StepFinalized{Calls: 1},
		}})
}

// reopen closes p and opens its checkpoint at path again, closed when the
// test ends.
func reopen(t *testing.T, p *projection.Projector, path string) *projection.Projector {
	t.Helper()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	p, err := projection.Open(path, projection.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// follow runs the projector until the returned stop is called.
func follow(t *testing.T, p *projection.Projector, src projection.Source) (stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Follow(ctx, src) }()
	return func() error {
		cancel()
		return <-done
	}
}

// following opens a projector on a fresh checkpoint, follows src with it
// until the test ends, and waits until it has applied seq.
func following(t *testing.T, src projection.Source, seq uint64) *projection.Projector {
	t.Helper()
	p, err := projection.Open(filepath.Join(t.TempDir(), "projections.db"), projection.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	stop := follow(t, p, src)
	t.Cleanup(func() { stop() })
	wait(t, p, seq)
	return p
}

func wait(t *testing.T, p *projection.Projector, seq uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.WaitFor(ctx, seq); err != nil {
		t.Fatal(err)
	}
}

func TestProjectorRestartReplaysOnlyTheTail(t *testing.T) {
	s := steptest.Start(t, "")
	w := newWriter(t, s.Log)
	path := filepath.Join(t.TempDir(), "projections.db")
	runs := []string{w.start(), w.start(), w.start()}
	for i := range 30 {
		w.echo(runs[i%3])
	}
	p, err := projection.Open(path, projection.Options{FlushEvery: 7})
	if err != nil {
		t.Fatal(err)
	}
	stop := follow(t, p, s.Log)
	wait(t, p, w.seq)
	if err := stop(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Follow = %v, want context.Canceled", err)
	}
	before, err := p.All()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}

	for i := range 5 {
		w.echo(runs[i%3])
	}
	p, err = projection.Open(path, projection.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	restored, err := p.All()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, restored); diff != "" {
		t.Errorf("checkpoint after restart differs from the state before (-before +after):\n%s", diff)
	}
	stop = follow(t, p, s.Log)
	defer stop()
	wait(t, p, w.seq)
	if got := p.Replayed(); got != 5 {
		t.Errorf("replayed %d commits after the restart, want only the 5 of the tail", got)
	}
	got, err := p.All()
	if err != nil {
		t.Fatal(err)
	}
	want, err := projection.Rebuild(context.Background(), s.Log, w.seq)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.Runs, got); diff != "" {
		t.Errorf("projection after restart differs from a rebuild from sequence 1 (-rebuild +projection):\n%s", diff)
	}
}

// The case that bit others: a projector cancelled mid-stream must not lose the
// last sequence it applied.
func TestCancelledProjectorKeepsItsSequence(t *testing.T) {
	s := steptest.Start(t, "")
	w := newWriter(t, s.Log)
	run := w.start()
	for range 20 {
		w.echo(run)
	}
	path := filepath.Join(t.TempDir(), "projections.db")
	p, err := projection.Open(path, projection.Options{FlushEvery: 1 << 20, FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	stop := follow(t, p, s.Log)
	wait(t, p, w.seq)
	_ = stop()
	p = reopen(t, p, path)
	if got := p.Seq(); got != w.seq {
		t.Errorf("sequence after a cancelled projector reopened = %d, want %d", got, w.seq)
	}
}

func TestProjectorFoldsUnknownEventTypes(t *testing.T) {
	s := steptest.Start(t, "")
	w := newWriter(t, s.Log)
	run := w.start()
	// A newer build wrote an event type this one has never heard of.
	w.commit(&events.Commit{ID: w.ids.New(time.Now()), Run: run, Kind: events.KindCatalog, At: at,
		Events: []events.Event{events.Unknown{Type: "RunAnnotated", V: 1, Data: []byte(`{"note":"x"}`)}}})
	w.echo(run)
	p := following(t, s.Log, w.seq)
	h, _, err := p.Header(run)
	if steps := h.Steps; err != nil || steps != 1 {
		t.Errorf("run after an unknown event: %d steps, %v; want 1 step", steps, err)
	}
}

// A message that is not a commit is quarantined, not a reason to stop: the
// projector goes past it and folds what follows.
func TestProjectorQuarantinesUndecodableCommit(t *testing.T) {
	s := steptest.Start(t, "")
	w := newWriter(t, s.Log)
	run := w.start()
	ack, err := s.JS.Publish(context.Background(), "sg.run.garbage", []byte("{not json"))
	if err != nil {
		t.Fatal(err)
	}
	w.seq = ack.Sequence
	w.echo(run)
	p := following(t, s.Log, w.seq)
	if got := p.Seq(); got != w.seq {
		t.Errorf("projector at %d, want past the garbage to %d", got, w.seq)
	}
	h, _, err := p.Header(run)
	if steps := h.Steps; err != nil || steps != 1 {
		t.Errorf("run after the garbage: %d steps, %v; want 1 step", steps, err)
	}
	q := p.Quarantine()
	if q.Total != 1 || len(q.Recent) != 1 || q.Recent[0].Seq != ack.Sequence || q.Recent[0].Subject != "sg.run.garbage" {
		t.Errorf("quarantine = %+v, want the one garbage message at %d", q, ack.Sequence)
	}
}

// A run read back from the checkpoint decodes only its last step; any other
// step is read when asked for, and each must come back as it was folded.
func TestCheckpointedRunDecodesStepsOnDemand(t *testing.T) {
	s := steptest.Start(t, "")
	w := newWriter(t, s.Log)
	path := filepath.Join(t.TempDir(), "projections.db")
	run := w.start()
	for range 130 { // more than two words of the stub set
		w.echo(run)
	}
	later := w.start() // its steps sort after the first run's in the checkpoint
	w.echo(later)
	w.echo(later)
	p, err := projection.Open(path, projection.Options{})
	if err != nil {
		t.Fatal(err)
	}
	stop := follow(t, p, s.Log)
	wait(t, p, w.seq)
	if err := stop(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Follow = %v, want context.Canceled", err)
	}
	want := foldedSteps(t, s.Log, run)
	p = reopen(t, p, path)
	h, _, err := p.Header(run)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want[130], h.Last); diff != "" {
		t.Errorf("last step after reopening (-folded +loaded):\n%s", diff)
	}
	if steps, stubs := h.Steps, p.Stubs(run); steps != 130 || stubs != 129 {
		t.Fatalf("reopened run has %d steps, %d of them stubs; want 130 and 129", steps, stubs)
	}
	if h, _, err := p.Header(later); err != nil || h.Steps != 2 {
		t.Fatalf("the later run reopened with %d steps, %v; want 2", h.Steps, err)
	}
	for _, n := range []int{1, 64, 65, 128, 129, 64} {
		st, _, err := p.Step(run, n)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want[n], st); diff != "" {
			t.Errorf("step %d read on demand (-folded +loaded):\n%s", n, diff)
		}
	}
	whole, _, err := p.Run(run)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range whole.Steps {
		if diff := cmp.Diff(want[st.N], st); diff != "" {
			t.Errorf("step %d of the whole run (-folded +loaded):\n%s", st.N, diff)
		}
	}
}

// foldedSteps folds run's commits as the log holds them, by step number:
// what every view of the run must show, whatever it was read from.
func foldedSteps(t *testing.T, log *step.Log, run string) map[int]projection.Step {
	t.Helper()
	stored, err := log.ReadRun(context.Background(), run, 0)
	if err != nil {
		t.Fatal(err)
	}
	var r projection.Run
	for _, st := range stored {
		if err := r.Apply(st.Seq, st.Commit); err != nil {
			t.Fatal(err)
		}
	}
	want := map[int]projection.Step{}
	for _, st := range r.Steps {
		want[st.N] = st
	}
	return want
}

// A checkpoint lets go of the final steps it wrote, but the last: a view
// sees them as stubs, and reading them (or the whole run) gives them back
// from the checkpoint as they were folded. The run goes on as before.
func TestCheckpointLetsGoOfWrittenSteps(t *testing.T) {
	s := steptest.Start(t, "")
	w := newWriter(t, s.Log)
	run := w.start()
	for range 10 {
		w.echo(run)
	}
	p := following(t, s.Log, w.seq)
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := p.Stubs(run); n != 9 {
		t.Fatalf("after a checkpoint %d of 10 steps are stubs, want 9 (all but the last)", n)
	}
	want := foldedSteps(t, s.Log, run)
	st, _, err := p.Step(run, 3)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want[3], st); diff != "" {
		t.Errorf("step 3 read back (-folded +read):\n%s", diff)
	}
	w.echo(run)
	wait(t, p, w.seq)
	want = foldedSteps(t, s.Log, run)
	r, _, err := p.Run(run)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Steps) != 11 {
		t.Fatalf("the run has %d steps, want 11", len(r.Steps))
	}
	for _, st := range r.Steps {
		if diff := cmp.Diff(want[st.N], st); diff != "" {
			t.Errorf("step %d of the whole run (-folded +read):\n%s", st.N, diff)
		}
	}
}

// An ended run leaves memory once a checkpoint holds it, a running one
// stays, and a view of the ended run loads it back as it was folded.
func TestEndedRunLeavesMemoryAfterACheckpoint(t *testing.T) {
	s := steptest.Start(t, "")
	w := newWriter(t, s.Log)
	ended, running := w.start(), w.start()
	for range 3 {
		w.echo(ended)
		w.echo(running)
	}
	w.commit(&events.Commit{ID: w.ids.New(time.Now()), Run: ended, Kind: events.KindEnd, At: at,
		Events: []events.Event{events.RunEnded{Cause: events.CauseCompleted}}})
	p := following(t, s.Log, w.seq)
	if !p.InMemory(ended) || !p.InMemory(running) {
		t.Fatal("the runs are not in memory after being folded")
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	if p.InMemory(ended) {
		t.Error("the ended run is still in memory after a checkpoint")
	}
	if !p.InMemory(running) {
		t.Error("the running run left memory")
	}
	want := foldedSteps(t, s.Log, ended)
	r, ok, err := p.Run(ended)
	if !ok || err != nil {
		t.Fatalf("view of the ended run: found %v, %v", ok, err)
	}
	if r.Status != projection.StatusEnded || len(r.Steps) != 3 {
		t.Errorf("reloaded run: %s with %d steps, want ended with 3", r.Status, len(r.Steps))
	}
	for _, st := range r.Steps {
		if diff := cmp.Diff(want[st.N], st); diff != "" {
			t.Errorf("step %d reloaded (-folded +read):\n%s", st.N, diff)
		}
	}
}

// A checkpoint whose write fails loses nothing: the next one writes what
// the failed one took, and a reopened projector has the whole run.
func TestFailedCheckpointIsWrittenLater(t *testing.T) {
	path := filepath.Join(t.TempDir(), "projections.db")
	p, err := projection.Open(path, projection.Options{})
	if err != nil {
		t.Fatal(err)
	}
	hist := history()
	for i, c := range hist {
		if err := p.ApplyOwn(uint64(i+1), c); err != nil {
			t.Fatal(err)
		}
	}
	restore := p.FailWrites(t)
	if err := p.Flush(); err == nil {
		t.Fatal("a checkpoint into a closed database succeeded")
	}
	restore()
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	p = reopen(t, p, path)
	got, _, err := p.Run(runID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fold(t, hist), got); diff != "" {
		t.Errorf("run after a failed and a good checkpoint (-folded +reopened):\n%s", diff)
	}
}
