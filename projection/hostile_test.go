package projection

import (
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/events"
	"pgregory.net/rapid"
)

// These tests drive the live projector's own paths — applyStream, as Follow
// calls it for every message in stream order, and ApplyFrom, as a refresh
// after a lost race does — with messages no engine writes, and compare with
// a fold of the good messages alone.

// fataler is what these helpers need of a *testing.T, *testing.F or *rapid.T.
type fataler interface {
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

var hostileAt = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// message is one message of a stream: its subject, bytes, and whether a
// well-behaved engine could have written it.
type message struct {
	subject string
	data    []byte
	good    bool
}

func encode(t fataler, c *events.Commit) []byte {
	b, err := events.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// goodHistory is a consistent history of run: a start, steps of one or two
// calls in one or two commits, maybe an end.
func goodHistory(t *rapid.T, run string) []*events.Commit {
	mkc := func(id string, n int, kind events.Kind, evs ...events.Event) *events.Commit {
		return &events.Commit{ID: run + "-" + id, Run: run, Step: n, Kind: kind, At: hostileAt, Host: "h", Events: evs}
	}
	cs := []*events.Commit{mkc("s", 0, events.KindStart, events.RunStarted{Agent: "build", Project: "p"})}
	for n := 1; n <= rapid.IntRange(0, 4).Draw(t, "steps"); n++ {
		var decide, settle []events.Event
		for i := range rapid.IntRange(1, 2).Draw(t, "calls") {
			id := fmt.Sprint("c", i)
			decide = append(decide, events.ToolCallRequested{CallID: id, Tool: "echo"},
				events.PermissionDecided{CallID: id, Verdict: events.VerdictAllow}, events.ToolCallStarted{CallID: id, Attempt: 1})
			settle = append(settle, events.ToolResultRecorded{CallID: id})
		}
		settle = append(settle, events.StepFinalized{Calls: len(decide) / 3})
		if rapid.Bool().Draw(t, "one commit") {
			cs = append(cs, mkc(fmt.Sprint("x", n), n, events.KindStep, append(decide, settle...)...))
		} else {
			cs = append(cs, mkc(fmt.Sprint("d", n), n, events.KindDecide, decide...),
				mkc(fmt.Sprint("t", n), n, events.KindSettle, settle...))
		}
	}
	if rapid.Bool().Draw(t, "end") {
		cs = append(cs, mkc("e", 0, events.KindEnd, events.RunEnded{Cause: events.CauseCompleted}))
	}
	return cs
}

// hostile draws one message no engine writes, aimed at victim (a run with
// published commits sent so far) while other is another run.
func hostile(t *rapid.T, victim, other string, sent []*events.Commit) message {
	last := sent[len(sent)-1]
	on := events.RunSubject(victim)
	wrong := func(c events.Commit) message { return message{subject: on, data: encode(t, &c)} }
	switch rapid.IntRange(0, 15).Draw(t, "kind") {
	case 0: // any bytes at all, on any subject of the log
		subject := rapid.SampledFrom([]string{on, events.RegistrySubject("s"), events.OutputSubject, events.GrantSubject("p"), "sg.other"}).Draw(t, "subject")
		return message{subject: subject, data: rapid.SliceOfN(rapid.Byte(), 0, 64).Draw(t, "bytes")}
	case 1: // JSON of another shape
		return message{subject: on, data: []byte(rapid.SampledFrom([]string{`[]`, `null`, `{}`, `"x"`, `{"id":1}`, `{"events":{}}`}).Draw(t, "shape"))}
	case 2: // a payload of the wrong type
		return message{subject: on, data: fmt.Appendf(nil, `{"id":"w","run":%q,"step":1,"kind":"step","at":"2026-12-01T00:00:00Z","events":[{"type":"ToolCallRequested","v":1,"data":{"call_id":5}}]}`, victim)}
	case 3: // another run's commit on the victim's subject
		c := *last
		c.Run, c.ID = other, "foreign"
		return wrong(c)
	case 4: // a step far ahead
		c := *last
		c.ID, c.Step, c.Kind = "ahead", rapid.IntRange(10, 1<<30).Draw(t, "ahead"), events.KindStep
		c.Events = []events.Event{events.ToolCallRequested{CallID: "z", Tool: "echo"}}
		return wrong(c)
	case 5: // the start again
		c := *sent[0]
		c.ID = "restart"
		return wrong(c)
	case 6: // an end of the victim, on a subject that is not its own
		c := events.Commit{ID: "end", Run: victim, Kind: events.KindEnd, At: hostileAt, Events: []events.Event{events.RunEnded{Cause: events.CauseFailed}}}
		subject := rapid.SampledFrom([]string{events.RunSubject(other), events.RegistrySubject("s"), events.OutputSubject, events.GrantSubject("p")}).Draw(t, "foreign")
		return message{subject: subject, data: encode(t, &c)}
	case 7: // a commit sent again with its id
		return wrong(*rapid.SampledFrom(sent).Draw(t, "again"))
	case 8: // a kind nobody knows
		c := *last
		c.ID, c.Kind = "kind", events.Kind(rapid.StringMatching(`[a-z]{1,8}`).Filter(func(k string) bool { return !runKinds[events.Kind(k)] }).Draw(t, "k"))
		return wrong(c)
	case 9: // a negative step
		c := *last
		c.ID, c.Step = "neg", -rapid.IntRange(1, 1<<40).Draw(t, "neg")
		return wrong(c)
	case 10: // no events
		c := *last
		c.ID, c.Events = "empty", nil
		return message{subject: on, data: fmt.Appendf(nil, `{"id":"empty","run":%q,"kind":"step","at":"2026-12-01T00:00:00Z","events":[]}`, victim)}
	case 11: // a result for a call never requested
		c := *last
		c.ID, c.Kind, c.Events = "nocall", events.KindSettle, []events.Event{events.ToolResultRecorded{CallID: "nobody"}}
		return wrong(c)
	case 12: // a registry commit on another scope's subject
		c := events.Commit{ID: "reg", Kind: events.KindRegistry, At: hostileAt,
			Events: []events.Event{events.ToolRegistered{Scope: "a", Name: "echo", Identity: "i"}}}
		return message{subject: events.RegistrySubject("b"), data: encode(t, &c)}
	case 14: // the next step begun, then an event that cannot apply: all or nothing
		next := 0
		for _, c := range sent {
			next = max(next, c.Step)
		}
		c := events.Commit{ID: "half", Run: victim, Step: next + 1, Kind: events.KindStep, At: hostileAt, Host: "intruder",
			Events: []events.Event{events.ToolCallRequested{CallID: "h", Tool: "echo"},
				events.PermissionDecided{CallID: "h", Verdict: events.VerdictAllow}, events.ToolResultRecorded{CallID: "nobody"}}}
		return wrong(c)
	case 15: // issue 22: only an event this build cannot read, for a step near or far
		return farStep(t, victim, sent)
	default: // an approval for another project, inside the victim's run
		c := *last
		c.ID, c.Kind, c.Events = "grant", events.KindResolve, []events.Event{events.ApprovalSaved{ID: "g", Project: "elsewhere", Action: "bash", Resource: "*"}}
		return wrong(c)
	}
}

// hostileStream interleaves the good histories of three runs with hostile
// messages aimed at the first two; the third is never touched.
func hostileStream(t *rapid.T) (runs []string, msgs []message) {
	runs = []string{"01VICTIMA", "01VICTIMB", "01UNTOUCHED"}
	hist := map[string][]*events.Commit{}
	for _, r := range runs {
		hist[r] = goodHistory(t, r)
	}
	sent := map[string]int{}
	for {
		var live []string
		for _, r := range runs {
			if sent[r] < len(hist[r]) {
				live = append(live, r)
			}
		}
		if len(live) == 0 {
			return runs, msgs
		}
		victim := rapid.SampledFrom(runs[:2]).Draw(t, "victim")
		if sent[victim] > 0 && rapid.IntRange(0, 2).Draw(t, "hostile?") == 0 {
			msgs = append(msgs, hostile(t, victim, runs[1-indexOf(runs, victim)], hist[victim][:sent[victim]]))
			continue
		}
		r := rapid.SampledFrom(live).Draw(t, "run")
		c := hist[r][sent[r]]
		sent[r]++
		msgs = append(msgs, message{subject: events.RunSubject(r), data: encode(t, c), good: true})
	}
}

func indexOf(ss []string, s string) int {
	for i, x := range ss {
		if x == s {
			return i
		}
	}
	return -1
}

// expected folds msgs as they should be: the good ones applied, the others
// only moving their run's last sequence when they were stored on its subject.
func expected(t fataler, msgs []message) (map[string]*Run, int) {
	runs := map[string]*Run{}
	bad := 0
	for i, m := range msgs {
		seq := uint64(i + 1)
		run, onRun := events.IsRunSubject(m.subject)
		if !m.good {
			bad++
			if r := runs[run]; onRun && r != nil {
				r.Skip(seq)
			}
			continue
		}
		c, err := events.Unmarshal(m.data)
		if err != nil {
			t.Fatal(err)
		}
		if runs[run] == nil {
			runs[run] = &Run{ID: run}
		}
		if err := runs[run].Apply(seq, c); err != nil {
			t.Fatalf("a good commit does not apply: %v", err)
		}
	}
	for id, r := range runs {
		cp, err := r.Clone()
		if err != nil {
			t.Fatal(err)
		}
		runs[id] = cp
	}
	return runs, bad
}

func quietProjector(t fataler, path string) *Projector {
	p, err := Open(path, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), FlushEvery: 7})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Hostile messages among three runs' commits, folded by the live projector
// (in stream order, some of them first by a refresh, checkpointed at
// random points, crashing at others and folding again from its
// checkpoint), by a checkpoint reloaded, by a rebuild, and by a host
// following the stream (Follow's flusher checkpointing), stopped anywhere
// and restarted from its checkpoint, which verifies against a rebuild:
// never an error or a panic, each hostile message quarantined once, the
// untouched run exactly as its own history folds, a touched one too except
// for its last sequence, which moved past what was quarantined on its
// subject.
func TestHostileMessagesAreQuarantinedProperty(t *testing.T) {
	dir := t.TempDir()
	n := 0
	rapid.Check(t, func(t *rapid.T) {
		runs, msgs := hostileStream(t)
		want, bad := expected(t, msgs)
		n++
		path := filepath.Join(dir, fmt.Sprint(n, ".db"))
		p := quietProjector(t, path)
		defer func() {
			if p != nil {
				p.Close()
			}
		}()
		crashes := 0
		for i := 0; i < len(msgs); i++ {
			m, seq := msgs[i], uint64(i+1)
			if crashes < 3 && rapid.IntRange(0, 9).Draw(t, "crash?") == 0 {
				crashes++
				p.db.Close() // what it folded since its last checkpoint is lost
				p = quietProjector(t, path)
				i = int(p.Seq()) - 1 // the stream delivers again from the checkpoint on
				continue
			}
			if rapid.IntRange(0, 4).Draw(t, "refresh first?") == 0 {
				if _, onRun := events.IsRunSubject(m.subject); onRun {
					if err := p.ApplyFrom(seq, m.subject, m.data); err != nil {
						t.Fatalf("ApplyFrom at %d: %v", seq, err)
					}
				}
			}
			if err := p.applyStream(seq, m.subject, m.data); err != nil {
				t.Fatalf("applyStream at %d: %v", seq, err)
			}
			if rapid.IntRange(0, 3).Draw(t, "checkpoint now?") == 0 {
				if err := p.Flush(); err != nil {
					t.Fatalf("checkpoint at %d: %v", seq, err)
				}
			}
		}
		check := func(what string, got map[string]*Run, q Quarantine) {
			if diff := cmp.Diff(want[runs[2]], got[runs[2]]); diff != "" {
				t.Fatalf("%s: the untouched run (-fold of its history +got):\n%s", what, diff)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("%s: runs (-fold of the good messages +got):\n%s", what, diff)
			}
			if q.Total != uint64(bad) || len(q.Recent) != bad {
				t.Fatalf("%s: quarantined %d (%d listed), want %d", what, q.Total, len(q.Recent), bad)
			}
			for _, e := range q.Recent {
				if msgs[e.Seq-1].good || e.Subject != msgs[e.Seq-1].subject || e.Reason == "" {
					t.Fatalf("%s: quarantined %+v, a good message or a wrong record", what, e)
				}
			}
		}
		got, err := p.All()
		if err != nil {
			t.Fatal(err)
		}
		live := p.Quarantine()
		check("live", got, live)
		if err := p.Close(); err != nil {
			t.Fatalf("checkpoint: %v", err)
		}
		p = quietProjector(t, path)
		if got, err = p.All(); err != nil {
			t.Fatal(err)
		}
		check("reloaded", got, p.Quarantine())
		rb := newRebuilt()
		for i, m := range msgs {
			rb.fold(uint64(i+1), m.subject, m.data)
		}
		if rb, err = rb.finish(uint64(len(msgs))); err != nil {
			t.Fatal(err)
		}
		check("rebuilt", rb.Runs, rb.Quarantine)
		if diff := cmp.Diff(rb.Quarantine, live); diff != "" {
			t.Fatalf("the rebuild's quarantine and the live one differ:\n%s", diff)
		}
		// As a host: followed, checkpointed by Follow's flusher, stopped
		// anywhere, restarted from its checkpoint, and verified.
		cut := rapid.IntRange(0, len(msgs)).Draw(t, "stopped at")
		followed := filepath.Join(dir, fmt.Sprint(n, "-followed.db"))
		followRestartVerify(t, followed, followOpts(rapid.IntRange(1, 8).Draw(t, "flush every")), msgs, cut)
		p.Close()
		p = quietProjector(t, followed)
		if got, err = p.All(); err != nil {
			t.Fatal(err)
		}
		check("followed, restarted", got, p.Quarantine())
	})
}
