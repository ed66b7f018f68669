package replay_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/replay"
	"github.com/stepgate/stepgate/step/steptest"
)

// logWriter commits to a real log, each run's commits chained, each
// subject's expectation its last sequence.
type logWriter struct {
	t    *testing.T
	s    *steptest.Server
	ids  *events.IDSource
	at   time.Time
	last map[string]uint64 // by subject
	prev map[string]string // by run
}

func (w *logWriter) commit(subject string, c *events.Commit) uint64 {
	w.t.Helper()
	c.ID, c.At = w.ids.New(w.at), w.at
	if c.Run != "" {
		c.Prev, w.prev[c.Run] = w.prev[c.Run], c.ID
	}
	seq, err := w.s.Log.CommitTo(context.Background(), subject, c, w.last[subject])
	if err != nil {
		w.t.Fatal(err)
	}
	w.last[subject] = seq
	return seq
}

func (w *logWriter) run(run string, n int, kind events.Kind, evs ...events.Event) uint64 {
	w.t.Helper()
	return w.commit(events.RunSubject(run), &events.Commit{Run: run, Step: n, Kind: kind, Host: "h1", Events: evs})
}

func (w *logWriter) start(run string) {
	w.t.Helper()
	w.run(run, 0, events.KindStart, events.RunStarted{Agent: "build", Project: "p1"},
		events.CatalogAdvertised{Fingerprint: "f", Tools: []events.AdvertisedTool{{Name: "bash", Identity: "b1"}}})
}

// step commits step n of run in one commit, or in a decide and a settle.
func (w *logWriter) step(run string, n int, split bool) uint64 {
	w.t.Helper()
	call := fmt.Sprint("c", n)
	req := events.ToolCallRequested{CallID: call, Tool: "bash", Args: []byte(`{"command":"ls"}`), Identity: "b1"}
	dec := events.PermissionDecided{CallID: call, Verdict: events.VerdictAllow}
	res, fin := events.ToolResultRecorded{CallID: call}, events.StepFinalized{Calls: 1}
	if !split {
		return w.run(run, n, events.KindStep, req, dec, res, fin)
	}
	w.run(run, n, events.KindDecide, req, dec)
	return w.run(run, n, events.KindSettle, res, fin)
}

// Time travel stops at the step's last commit: commits of other subjects
// after it (another run's, a grant saved) are not folded, those before it
// are; a step the run never took, and a run the log does not hold, are
// ErrNoStep.
func TestToStepFoldsToTheStepsLastCommit(t *testing.T) {
	s := steptest.Start(t, "")
	w := &logWriter{t: t, s: s, ids: events.NewIDSource(nil), at: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		last: map[string]uint64{}, prev: map[string]string{}}
	a, b := w.ids.New(w.at), w.ids.New(w.at.Add(time.Second))
	w.start(a)
	s1 := w.step(a, 1, false)
	w.start(b) // another run's commit after step 1
	grant := w.commit(events.GrantSubject("p1"), &events.Commit{Kind: events.KindGrant,
		Events: []events.Event{events.ApprovalSaved{ID: "g1", Project: "p1", Action: "bash", Resource: "ls", Principal: "ops"}}})
	w.run(a, 2, events.KindDecide, events.ToolCallRequested{CallID: "c2", Tool: "bash", Args: []byte(`{}`), Identity: "b1"},
		events.PermissionDecided{CallID: "c2", Verdict: events.VerdictAllow})
	w.step(b, 1, false) // interleaved within a's step 2
	s2 := w.run(a, 2, events.KindSettle, events.ToolResultRecorded{CallID: "c2"}, events.StepFinalized{Calls: 1})
	s3 := w.step(a, 3, true)
	w.commit(events.GrantSubject("p1"), &events.Commit{Kind: events.KindGrant,
		Events: []events.Event{events.GrantRevoked{ID: "g1", Project: "p1", Principal: "sec"}}})

	ctx := context.Background()
	for _, tc := range []struct {
		step     int
		seq      uint64
		runs     int
		grants   int
		bSteps   int
		stepsOfA int
	}{{1, s1, 1, 0, 0, 1}, {2, s2, 2, 1, 1, 2}, {3, s3, 2, 1, 1, 3}} {
		at, err := replay.ToStep(ctx, s.Log, a, tc.step)
		if err != nil {
			t.Fatalf("step %d: %v", tc.step, err)
		}
		p := at.Projections
		bSteps := 0
		if r := p.Runs[b]; r != nil {
			bSteps = len(r.Steps)
		}
		if p.Seq != tc.seq || len(p.Runs) != tc.runs || len(p.ActiveAt("p1")) != tc.grants || bSteps != tc.bSteps ||
			len(p.Runs[a].Steps) != tc.stepsOfA || !p.Runs[a].Steps[tc.step-1].Final {
			t.Errorf("at step %d: sequence %d, %d runs, %d grants, b with %d steps, a with %d; want %+v",
				tc.step, p.Seq, len(p.Runs), len(p.ActiveAt("p1")), bSteps, len(p.Runs[a].Steps), tc)
		}
		if tc.grants == 1 && p.GrantLog["g1"].SavedSeq != grant {
			t.Errorf("at step %d: grant g1 saved at %d, want %d", tc.step, p.GrantLog["g1"].SavedSeq, grant)
		}
	}
	for _, tc := range []struct {
		run  string
		step int
		want string
	}{{a, 4, "has 3 steps, not 4"}, {a, 0, "steps count from 1"}, {w.ids.New(w.at), 1, "holds no commit of it"}} {
		if _, err := replay.ToStep(ctx, s.Log, tc.run, tc.step); !errors.Is(err, replay.ErrNoStep) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run %s step %d: %v, want ErrNoStep: %s", tc.run, tc.step, err, tc.want)
		}
	}
}
