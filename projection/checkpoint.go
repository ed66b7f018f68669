package projection

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// The checkpoint's layout in bbolt. A run is stored as its header (the run
// without steps) and one key per step, so a checkpoint writes only what
// changed, whatever the length of the run.
var (
	bucketMeta  = []byte("meta")
	bucketRuns  = []byte("runs")
	bucketSteps = []byte("steps")
	keySeq      = []byte("seq")
)

// stepKey is run id, a zero byte, and the big-endian step number, so the
// steps of one run are contiguous and ordered.
func stepKey(run string, n int) []byte {
	k := make([]byte, len(run)+1+8)
	copy(k, run)
	binary.BigEndian.PutUint64(k[len(run)+1:], uint64(n))
	return k
}

// batch is one checkpoint write: encoded pieces, made under the projector's
// lock and written outside it.
type batch struct {
	seq   uint64
	runs  map[string][]byte
	steps map[string][]byte
	blobs map[string][]byte // shared header parts not stored yet, by digest
	final []finalStep       // steps to encode outside the projector's lock
	// taken and takenIdx are the dirt the batch took, put back if its write fails.
	taken    map[string]map[int]bool
	takenIdx indexDirt
	tickets  map[string]string
	grants   map[string][]byte
	scopes   map[string][]byte
	pending  map[string][]byte // ticket → its index entry; nil value: resolved
	open     map[string]bool   // run → open or no longer
	outputs  map[string][]byte // nil: unchanged
	// quarantine is a copy of the quarantine, encoded when the batch is
	// written; nil: unchanged.
	quarantine *Quarantine
}

// allBuckets names every bucket of the checkpoint.
func allBuckets() [][]byte {
	return [][]byte{bucketMeta, bucketRuns, bucketSteps, bucketTickets, bucketPending, bucketOpen,
		bucketGrants, bucketOutputs, bucketRegistry, bucketBlobs}
}

// initBuckets creates the buckets a checkpoint lacks. It writes only when one
// is missing: a write transaction syncs the file, and at start that would
// wait for every page the previous process left unflushed.
func initBuckets(db *bolt.DB) error {
	missing := false
	err := db.View(func(tx *bolt.Tx) error {
		for _, name := range allBuckets() {
			missing = missing || tx.Bucket(name) == nil
		}
		return nil
	})
	if err != nil || !missing {
		return err
	}
	return db.Update(func(tx *bolt.Tx) error {
		for _, name := range allBuckets() {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return fmt.Errorf("create bucket %s: %w", name, err)
			}
		}
		return nil
	})
}

// writeBatch writes b in one transaction. Keys go in sorted order: bbolt
// inserts into sorted nodes, and random order would move half a node per put.
func writeBatch(db *bolt.DB, b *batch) error {
	return db.Update(func(tx *bolt.Tx) error {
		for _, w := range []struct {
			bucket *bolt.Bucket
			kv     map[string][]byte
			fill   float64
		}{{tx.Bucket(bucketRuns), b.runs, 1}, {tx.Bucket(bucketSteps), b.steps, 0.9}} {
			// Run ids (ULIDs) mostly grow, and step keys of one run grow at
			// the end: pack pages full. A header of a kilobyte or so fills
			// a page three times over, not twice.
			w.bucket.FillPercent = w.fill
			for _, k := range slices.Sorted(maps.Keys(w.kv)) {
				if err := w.bucket.Put([]byte(k), w.kv[k]); err != nil {
					return err
				}
			}
		}
		if err := writeBlobs(tx, b.blobs); err != nil {
			return err
		}
		if err := writeIndexes(tx, b); err != nil {
			return err
		}
		var seq [8]byte
		binary.BigEndian.PutUint64(seq[:], b.seq)
		return tx.Bucket(bucketMeta).Put(keySeq, seq[:])
	})
}

func readSeq(tx *bolt.Tx) uint64 {
	v := tx.Bucket(bucketMeta).Get(keySeq)
	if len(v) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(v)
}

// loadRun reads one run from the checkpoint; nil when the checkpoint does
// not hold it. Only the run's last step is read: every earlier step is
// final, and comes back as a stub {N, Final} listed in the returned stubs,
// read and decoded when someone asks for it (see Projector.decodeLocked).
// Finding the last step takes one seek, so a run of ten thousand steps loads
// in the time of a short one; a step missing in between is reported when it
// is asked for.
func loadRun(tx *bolt.Tx, bl *blobs, id string) (r *Run, lazy stubs, err error) {
	v := tx.Bucket(bucketRuns).Get([]byte(id))
	if v == nil {
		return nil, nil, nil
	}
	if r, err = bl.decodeHeader(tx, id, v); err != nil {
		return nil, nil, err
	}
	prefix := append([]byte(id), 0)
	ofRun := func(k []byte) bool { return len(k) == len(prefix)+8 && bytes.HasPrefix(k, prefix) }
	c := tx.Bucket(bucketSteps).Cursor()
	if k, _ := c.Seek(prefix); !ofRun(k) {
		return r, nil, nil // no steps yet
	} else if first := binary.BigEndian.Uint64(k[len(prefix):]); first != 1 {
		return nil, nil, fmt.Errorf("checkpoint of run %s: first step is %d: %w", id, first, ErrInconsistent)
	}
	// Past the run's largest possible key, then one back.
	var k, last []byte
	if after, _ := c.Seek(stepKey(id, -1)); after == nil {
		k, last = c.Last()
	} else {
		k, last = c.Prev()
	}
	if !ofRun(k) {
		return nil, nil, fmt.Errorf("checkpoint of run %s: last step key %x: %w", id, k, ErrInconsistent)
	}
	n := binary.BigEndian.Uint64(k[len(prefix):])
	if n > 1<<31 {
		return nil, nil, fmt.Errorf("checkpoint of run %s: last step %d: %w", id, n, ErrInconsistent)
	}
	r.Steps = make([]Step, n)
	for i := range r.Steps {
		r.Steps[i] = Step{N: i + 1, Final: true}
		if i+1 < int(n) {
			lazy.add(i + 1)
		}
	}
	if err := decodeStep(r, int(n), last); err != nil {
		return nil, nil, err
	}
	return r, lazy, nil
}

// decodeStep replaces step n of r with its checkpoint form raw.
func decodeStep(r *Run, n int, raw []byte) error {
	s, err := parseStep(r.ID, n, raw)
	if err != nil {
		return err
	}
	r.Steps[n-1] = s
	return nil
}

// parseStep reads step n of run from its checkpoint form raw.
func parseStep(run string, n int, raw []byte) (Step, error) {
	if raw == nil {
		return Step{}, fmt.Errorf("checkpoint of run %s: step %d is missing: %w", run, n, ErrInconsistent)
	}
	var s Step
	if err := json.Unmarshal(raw, &s); err != nil {
		return Step{}, fmt.Errorf("checkpoint of run %s step %d: %w", run, n, err)
	}
	if s.N != n {
		return Step{}, fmt.Errorf("checkpoint of run %s: step %d stored as %d: %w", run, s.N, n, ErrInconsistent)
	}
	return s, nil
}
