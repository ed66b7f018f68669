package projection

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	bolt "go.etcd.io/bbolt"
)

// A checkpoint written before the pending index and the shared header
// parts — pending tickets stored as their run's id, headers holding their
// rules and tools inline — opens with every pending ticket whole (project,
// tool, identity, deadline, step), loads its runs as they were, and is
// written in the new form at the next checkpoint.
func TestOlderCheckpointFormsLoad(t *testing.T) {
	const n = 20
	path := filepath.Join(t.TempDir(), "p.db")
	p, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	w := newWaiting(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	w.fill(t, p, n)
	want, err := p.All()
	if err != nil {
		t.Fatal(err)
	}
	wantPending, _ := p.PendingPage(PendingQuery{Limit: n})
	// Rewrite the checkpoint as an older engine wrote it.
	if err := p.db.Update(func(tx *bolt.Tx) error {
		for id, r := range want {
			h := *r
			h.Steps = nil
			v, err := json.Marshal(&h)
			if err != nil {
				return err
			}
			if err := tx.Bucket(bucketRuns).Put([]byte(id), v); err != nil {
				return err
			}
		}
		for _, pt := range wantPending {
			if err := tx.Bucket(bucketPending).Put([]byte(pt.ID), []byte(pt.Run)); err != nil {
				return err
			}
		}
		return tx.DeleteBucket(bucketBlobs)
	}); err != nil {
		t.Fatal(err)
	}
	p.db.Close()
	for round := range 2 {
		if p, err = Open(path, Options{}); err != nil {
			t.Fatal(err)
		}
		got, err := p.All()
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("round %d: runs differ (-written +loaded):\n%s", round, d)
		}
		gotPending, _ := p.PendingPage(PendingQuery{Limit: n})
		for i := range gotPending {
			if gotPending[i].Deadline == nil || !gotPending[i].Deadline.Equal(*wantPending[i].Deadline) {
				t.Fatalf("round %d: ticket %s deadline %v, want %v", round, gotPending[i].ID, gotPending[i].Deadline, wantPending[i].Deadline)
			}
			gotPending[i].Deadline = wantPending[i].Deadline
		}
		if d := cmp.Diff(wantPending, gotPending); d != "" {
			t.Errorf("round %d: pending tickets differ (-written +loaded):\n%s", round, d)
		}
		if err := p.Close(); err != nil { // writes the new forms
			t.Fatal(err)
		}
	}
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketPending).ForEach(func(k, v []byte) error {
			if len(v) == 0 || v[0] != pendingForm {
				t.Errorf("pending ticket %s still in the older form %q", k, v)
			}
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
}
