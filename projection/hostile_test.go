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
