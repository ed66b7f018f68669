package projection

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/events"
)

// fuzzHistory is a run's consistent history of steps steps.
func fuzzHistory(run string, steps int) []*events.Commit {
	cs := []*events.Commit{{ID: run + "s", Run: run, Kind: events.KindStart, At: hostileAt,
		Events: []events.Event{events.RunStarted{Agent: "build", Project: "p"}}}}
	for n := 1; n <= steps; n++ {
		cs = append(cs, &events.Commit{ID: fmt.Sprint(run, n), Run: run, Step: n, Kind: events.KindStep, At: hostileAt,
			Events: []events.Event{events.ToolCallRequested{CallID: "c", Tool: "echo"},
				events.PermissionDecided{CallID: "c", Verdict: events.VerdictAllow},
				events.ToolResultRecorded{CallID: "c"}, events.StepFinalized{Calls: 1}}})
	}
	return cs
}

// FuzzHostileMessage folds two runs' histories through the live projector,
// with one message of arbitrary bytes stored on one of the log's subjects
// between them: never an error, never a panic; the run on another subject
// folds exactly as its history; the run on the message's subject either
// took it whole (a valid commit of that run) or is as its history with its
// last sequence at the message, so its next commit is accepted; and the
// checkpoint writes and reads back. Then the same stream is followed as a
// host follows it (Follow, its flusher checkpointing on its own
// goroutine), the host stopped just before the message or just after it
// and restarted from its checkpoint (a new projector on the same file),
// and the checkpoint verified against a rebuild from sequence 1.
func FuzzHostileMessage(f *testing.F) {
	seeds := [][]byte{
		nil, []byte("{not json"), []byte(`[]`), []byte(`{}`),
		[]byte(`{"id":"x","run":"01VICTIM","step":2,"kind":"step","at":"2026-12-01T00:00:00Z","events":[{"type":"ToolCallRequested","v":1,"data":{"call_id":"d","tool":"echo"}}]}`),
		[]byte(`{"id":"x","run":"01VICTIM","step":99,"kind":"step","at":"2026-12-01T00:00:00Z","events":[{"type":"ToolCallRequested","v":1,"data":{"call_id":"d"}}]}`),
		[]byte(`{"id":"x","run":"01VICTIM","kind":"start","at":"2026-12-01T00:00:00Z","events":[{"type":"RunStarted","v":1,"data":{}}]}`),
		[]byte(`{"id":"x","run":"01OTHER","kind":"end","at":"2026-12-01T00:00:00Z","events":[{"type":"RunEnded","v":1,"data":{"cause":"failed"}}]}`),
		[]byte(`{"id":"x","run":"01VICTIM","step":1,"kind":"step","at":"2026-12-01T00:00:00Z","events":[{"type":"ToolCallStarted","v":1,"data":{"call_id":7}}]}`),
		[]byte(`{"id":"x","run":"01VICTIM","step":-3,"kind":"nope","at":"2026-12-01T00:00:00Z","events":[]}`),
		farStepCommit("x", "01VICTIM", 1_000_000), // issue 22: the checkpoint met a nil step
		farStepCommit("x", "01VICTIM", 2),         // the step the victim takes next, not begun
		farStepCommit("x", "01VICTIM", 1),
		farStepCommit("x", "01VICTIM", 0),
		farStepCommit("x", "01VICTIM", 3),
		farStepCommit("x", "01VICTIM", math.MaxInt64),
		farStepCommit("x", "01VICTIM", math.MinInt64),
		farStepCommit("x", "01OTHER", 1), // another run's, on the victim's subject
	}
	for i, s := range seeds {
		f.Add(s, uint8(i))
	}
	dir := f.TempDir()
	n := 0
	f.Fuzz(func(t *testing.T, data []byte, where uint8) {
		victim, other := "01VICTIM", "01OTHER"
		subjects := []string{events.RunSubject(victim), events.RegistrySubject("s"), events.OutputSubject,
			events.GrantSubject("p"), "sg.elsewhere"}
		subject := subjects[int(where)%len(subjects)]
		var msgs []message
		for _, c := range fuzzHistory(victim, 1) {
			msgs = append(msgs, message{subject: events.RunSubject(victim), data: encode(t, c), good: true})
		}
		msgs = append(msgs, message{subject: subject, data: data})
		at := uint64(len(msgs))
		for _, c := range fuzzHistory(other, 2) {
			msgs = append(msgs, message{subject: events.RunSubject(other), data: encode(t, c), good: true})
		}
		n++
		path := filepath.Join(dir, fmt.Sprint(n, ".db"))
		p := quietProjector(t, path)
		defer p.Close()
		for i, m := range msgs {
			if err := p.applyStream(uint64(i+1), m.subject, m.data); err != nil {
				t.Fatalf("applyStream at %d: %v", i+1, err)
			}
		}
		got, err := p.All()
		if err != nil {
			t.Fatal(err)
		}
		q := p.Quarantine()
		// Expected: the fuzzed message quarantined, unless it is a commit the
		// victim's fold accepts (then the victim folds it).
		want, _ := expected(t, msgs)
		if q.Total == 0 {
			c, err := events.Unmarshal(data)
			if err != nil || checkEnvelope(subject, c) != nil {
				t.Fatalf("a message that is not a commit of its subject was not quarantined: %q on %s", data, subject)
			}
			if subject == events.RunSubject(victim) { // a valid commit of the victim: folded whole
				rerun := &Run{}
				for i, m := range msgs[:at] {
					cm := c
					if uint64(i+1) != at {
						cm, _ = events.Unmarshal(m.data)
					}
					if err := rerun.Apply(uint64(i+1), cm); err != nil {
						t.Fatalf("the projector applied a commit a fold refuses: %v", err)
					}
				}
				want[victim], _ = rerun.Clone()
			}
		} else if q.Total != 1 || q.Recent[0].Seq != at || q.Recent[0].Subject != subject {
			t.Fatalf("quarantine = %+v, want the message at %d on %s", q, at, subject)
		}
		if diff := cmp.Diff(want[other], got[other]); diff != "" {
			t.Fatalf("the run on another subject (-its history +got):\n%s", diff)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("runs (-want +got):\n%s", diff)
		}
		if subject == events.RunSubject(victim) && got[victim].LastSeq != at {
			t.Fatalf("victim's last sequence %d, want %d (the message's): its next commit would be refused", got[victim].LastSeq, at)
		}
		if err := p.Flush(); err != nil {
			t.Fatalf("checkpoint: %v", err)
		}
		cut := int(at) - 1 + int(where/8)%2 // stopped before the message, or after it
		followRestartVerify(t, filepath.Join(dir, fmt.Sprint(n, "-followed.db")), followOpts(1+int(where/16)%4), msgs, cut)
	})
}
