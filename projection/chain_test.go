package projection_test

import (
	"errors"
	"testing"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection"
	"pgregory.net/rapid"
)

// again is c under a new id (another host's write of the same commit).
func again(c *events.Commit, id string) *events.Commit {
	cp := *c
	cp.ID = id
	return &cp
}

// A chained history folds whole; one that lost a commit (dropped, replaced
// by another host's write, or overtaken by a commit built on the history
// before it) is diverged exactly at the first commit that names another
// predecessor than the commit the fold holds — and nothing after it is
// folded. Commits naming no predecessor (a build before the chain, at the
// start of the run or anywhere later) fold as before, and so does the run's
// last commit stored again (quarantined as a duplicate when it cannot apply
// twice): neither is a break.
func TestChainFoldProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := genHistory(t)
		n := len(h)
		breakAt := -1 // index in the delivered history of the commit that breaks the chain
		dup := -1     // index of a commit stored again
		delivered := h
		switch mut := rapid.SampledFrom([]string{"none", "drop", "replace", "fork", "legacy", "unchained", "again"}).Draw(t, "mutation"); {
		case mut == "none" || n < 2:
		case mut == "drop": // a write lost: the commit after it names it
			i := rapid.IntRange(1, n-1).Draw(t, "i")
			delivered = append(append([]*events.Commit{}, h[:i]...), h[i+1:]...)
			if i < n-1 {
				breakAt = i
			}
		case mut == "replace": // a write lost and made again by another host, the rest kept
			i := rapid.IntRange(1, n-1).Draw(t, "i")
			delivered = append(append(append([]*events.Commit{}, h[:i]...), again(h[i], "other")), h[i+1:]...)
			if i < n-1 {
				breakAt = i + 1
			}
		case mut == "fork": // a host behind commits on the history before h[i]
			i := rapid.IntRange(1, n-1).Draw(t, "i")
			delivered = append(append(append([]*events.Commit{}, h[:i+1]...), again(h[i], "other")), h[i+1:]...)
			breakAt = i + 1
		case mut == "legacy": // the first k commits were written before the chain
			k := rapid.IntRange(1, n).Draw(t, "k")
			for _, c := range h[:k] {
				c.Prev = ""
			}
		case mut == "unchained": // a commit of an older build among chained ones
			h[rapid.IntRange(1, n-1).Draw(t, "i")].Prev = ""
		case mut == "again": // a commit stored a second time, right after itself
			if n < 3 {
				break
			}
			i := rapid.IntRange(1, n-2).Draw(t, "i")
			delivered = append(append(append([]*events.Commit{}, h[:i+1]...), h[i]), h[i+1:]...)
			dup = i + 1
		}
		r := &projection.Run{}
		for i, c := range delivered {
			err := r.Apply(uint64(i+1), c)
			switch {
			case breakAt >= 0 && i >= breakAt:
				if !errors.Is(err, projection.ErrDiverged) {
					t.Fatalf("commit %d (%s): %v, want diverged", i, c.ID, err)
				}
			case i == dup:
				if err != nil && !errors.Is(err, projection.ErrInconsistent) {
					t.Fatalf("commit %s stored again: %v, want applied or inconsistent", c.ID, err)
				}
			case err != nil:
				t.Fatalf("commit %d (%s): %v", i, c.ID, err)
			}
		}
		if r.LastSeq != uint64(len(delivered)) {
			t.Fatalf("last seq %d, want %d", r.LastSeq, len(delivered))
		}
		if breakAt < 0 {
			if r.Diverged != nil || (r.Commits != len(delivered) && (dup < 0 || r.Commits != len(delivered)-1)) || r.LastCommit != delivered[len(delivered)-1].ID {
				t.Fatalf("diverged %v, %d commits, last %s; want whole", r.Diverged, r.Commits, r.LastCommit)
			}
			return
		}
		d := r.Diverged
		if d == nil || d.Seq != uint64(breakAt+1) || d.Commit != delivered[breakAt].ID ||
			d.Want != delivered[breakAt-1].ID || d.Got != delivered[breakAt].Prev {
			t.Fatalf("diverged %+v, want at %d (%s after %s)", d, breakAt+1, delivered[breakAt].ID, delivered[breakAt-1].ID)
		}
		if r.Commits != breakAt || r.LastCommit != delivered[breakAt-1].ID {
			t.Fatalf("%d commits folded up to %s, want %d up to %s", r.Commits, r.LastCommit, breakAt, delivered[breakAt-1].ID)
		}
	})
}

// A run checkpointed before the chain holds no last commit: it adopts the
// predecessor its next commit names, and checks from then on.
func TestChainAdoptedAfterOldCheckpoint(t *testing.T) {
	h := link(history())
	r := &projection.Run{}
	for i, c := range h[:2] {
		if err := r.Apply(uint64(i+1), c); err != nil {
			t.Fatal(err)
		}
	}
	r.LastCommit = "" // as a checkpoint written before the chain reads back
	if err := r.Apply(3, h[2]); err != nil {
		t.Fatalf("first chained commit after an old checkpoint: %v", err)
	}
	if err := r.Apply(4, again(h[3], "other")); err != nil {
		t.Fatal(err)
	}
	bad := again(h[3], "late")
	bad.Prev = h[2].ID
	if err := r.Apply(5, bad); !errors.Is(err, projection.ErrDiverged) || r.Diverged == nil {
		t.Fatalf("a commit after the adopted chain that does not follow: %v, %+v", err, r.Diverged)
	}
}
