package projection

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/stepgate/stepgate/events"
	"pgregory.net/rapid"
)

// farStepCommit is a commit of run for step n holding only an event this
// build cannot read: issue 22's message, a settle whose StepFinalized is
// named as no build names it and carries no fields.
func farStepCommit(id, run string, n int64) []byte {
	return fmt.Appendf(nil, `{"id":%q,"run":%q,"step":%d,"kind":"settle","at":"2026-12-01T00:00:00Z","host":"intruder","events":[{"type":"sg.v1.StepFinalized","v":1}]}`,
		id, run, n)
}

// farSteps are the step numbers a commit of a run of two final steps can
// name, and whether the fold quarantines such a commit: the run's own
// (0), a step it has, the step it would take next (a newer build's event
// for it is skipped, and the commit applies: the step does not begin), and
// any step past that, or below 0, which no build writes.
var farSteps = []struct {
	step        int64
	quarantined bool
}{
	{0, false}, {1, false}, {2, false}, {3, false}, {4, true}, {1_000_000, true}, {1 << 31, true},
	{math.MaxInt64, true}, {-1, true}, {math.MinInt64, true},
}

// farStepStream is a run of two final steps, the far-step commit, and the
// run's third step: the message is at sequence 4.
func farStepStream(t fataler, run string, n int64) []message {
	var msgs []message
	for _, c := range fuzzHistory(run, 3) {
		msgs = append(msgs, message{subject: events.RunSubject(run), data: encode(t, c), good: true})
	}
	far := message{subject: events.RunSubject(run), data: farStepCommit("far", run, n)}
	return append(msgs[:3], append([]message{far}, msgs[3:]...)...)
}

// checkFarStep checks p after farStepStream: the run took its third step
// after the message, and the message was quarantined or not as the fold
// says.
func checkFarStep(t *testing.T, p *Projector, run string, quarantined bool) {
	t.Helper()
	r, ok, err := p.Run(run)
	if err != nil || !ok {
		t.Fatalf("run %s: %v, %v", run, ok, err)
	}
	if len(r.Steps) != 3 || !r.Steps[2].Final || r.LastSeq != 5 {
		t.Fatalf("run after the message: %d steps (want 3, all final), last sequence %d (want 5)", len(r.Steps), r.LastSeq)
	}
	if q := p.Quarantine(); (q.Total == 1 && q.Recent[0].Seq == 4) != quarantined || q.Total > 1 {
		t.Fatalf("quarantine %+v; want the message at 4 quarantined: %v", q, quarantined)
	}
}

// A commit naming a step a run does not have, its only event one this
// build cannot read, was folded and left that step marked for the next
// checkpoint, which met no step there and crashed the host (a nil step in
// takeBatch), on every restart. Folded by each path a host folds a commit
// by (the stream in order, a refresh ahead of it, the host's own commit),
// then checkpointed, reopened and verified: the projector writes its
// checkpoint, and the run takes its next step.
func TestFarStepCommitIsCheckpointed(t *testing.T) {
	run := "01FARSTEP"
	for _, fs := range farSteps {
		for _, path := range []string{"stream", "refresh", "own"} {
			t.Run(fmt.Sprint(path, "/", fs.step), func(t *testing.T) {
				msgs := farStepStream(t, run, fs.step)
				file := filepath.Join(t.TempDir(), "p.db")
				p := quietProjector(t, file)
				defer p.Close()
				for i, m := range msgs {
					seq := uint64(i + 1)
					switch {
					case seq != 4:
					case path == "refresh":
						if err := p.ApplyFrom(seq, m.subject, m.data); err != nil {
							t.Fatalf("ApplyFrom: %v", err)
						}
					case path == "own":
						c, err := events.Unmarshal(m.data)
						if err != nil {
							t.Fatal(err)
						}
						if err := p.ApplyOwn(seq, c); (err != nil) != fs.quarantined {
							t.Fatalf("ApplyOwn = %v, want quarantined: %v", err, fs.quarantined)
						}
					}
					if err := p.applyStream(seq, m.subject, m.data); err != nil {
						t.Fatalf("applyStream at %d: %v", seq, err)
					}
					if seq == 4 {
						if err := p.Flush(); err != nil {
							t.Fatalf("checkpoint after the message: %v", err)
						}
					}
				}
				checkFarStep(t, p, run, fs.quarantined)
				if err := p.Close(); err != nil {
					t.Fatalf("checkpoint: %v", err)
				}
				p = quietProjector(t, file)
				checkFarStep(t, p, run, fs.quarantined)
				if err := p.Close(); err != nil {
					t.Fatal(err)
				}
				verifyCheckpoint(t, file, followOpts(7), msgs)
			})
		}
	}
}

// The same message met by Follow, whose flusher checkpoints on its own
// goroutine within a millisecond: the host is stopped before the message
// or right after it, restarts from its checkpoint, follows on, and its
// checkpoint verifies against a rebuild.
func TestFarStepCommitFollowedRestartedVerified(t *testing.T) {
	run := "01FARSTEP"
	for _, fs := range farSteps {
		for _, cut := range []int{3, 4} {
			t.Run(fmt.Sprint(fs.step, "/stopped-at-", cut), func(t *testing.T) {
				msgs := farStepStream(t, run, fs.step)
				file := filepath.Join(t.TempDir(), "p.db")
				followRestartVerify(t, file, followOpts(1), msgs, cut)
				p := quietProjector(t, file)
				defer p.Close()
				checkFarStep(t, p, run, fs.quarantined)
			})
		}
	}
}

// Whatever marks reach it, a checkpoint writes only what exists: a mark
// for a step its run does not have (0, below, past the last) or for a run
// not in memory is dropped, the checkpoint is written, and the run reads
// back as it was.
func TestCheckpointDropsMarksOfWhatIsNotThere(t *testing.T) {
	run := "01MARKS"
	file := filepath.Join(t.TempDir(), "p.db")
	p := quietProjector(t, file)
	defer p.Close()
	var msgs []message
	for i, c := range fuzzHistory(run, 2) {
		m := message{subject: events.RunSubject(run), data: encode(t, c)}
		msgs = append(msgs, m)
		if err := p.applyStream(uint64(i+1), m.subject, m.data); err != nil {
			t.Fatal(err)
		}
	}
	p.mu.Lock()
	d := p.dirtyLocked(run)
	for _, n := range []int{0, -1, 3, 1_000_000, math.MaxInt, math.MinInt} {
		d[n] = true
	}
	p.dirtyLocked("01NOTINMEMORY")[1] = true
	p.mu.Unlock()
	if err := p.Flush(); err != nil {
		t.Fatalf("checkpoint with marks of steps that are not there: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	verifyCheckpoint(t, file, followOpts(7), msgs)
}

// farStep draws a commit of victim (with sent published so far) holding
// only an event this build cannot read, for a step drawn near the run's
// steps or far from them: the run's own, a step it has, the next, and
// anything below or past. It folds (good) when the fold takes it: the
// step is 0, one the run has, or the next one.
func farStep(t *rapid.T, victim string, sent []*events.Commit) message {
	steps := 0
	for _, c := range sent {
		steps = max(steps, c.Step)
	}
	n := rapid.OneOf(
		rapid.SampledFrom([]int64{0, int64(steps), int64(steps) + 1, int64(steps) + 2, 1_000_000, 1 << 31, math.MaxInt64, -1, math.MinInt64}),
		rapid.Int64Range(-3, int64(steps)+3), rapid.Int64(),
	).Draw(t, "far step")
	id := fmt.Sprint("far", rapid.IntRange(0, 1<<20).Draw(t, "far id"))
	return message{subject: events.RunSubject(victim), data: farStepCommit(id, victim, n),
		good: n >= 0 && n <= int64(steps)+1}
}
