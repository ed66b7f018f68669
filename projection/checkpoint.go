package projection

import (
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
	seq     uint64
	runs    map[string][]byte
	steps   map[string][]byte
	tickets map[string]string
	grants  map[string][]byte
	pending map[string]string // nil: unchanged
	open    map[string]bool
}

func initBuckets(tx *bolt.Tx) error {
	for _, name := range [][]byte{bucketMeta, bucketRuns, bucketSteps} {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return fmt.Errorf("create bucket %s: %w", name, err)
		}
	}
	return nil
}

// writeBatch writes b in one transaction. Keys go in sorted order: bbolt
// inserts into sorted nodes, and random order would move half a node per put.
func writeBatch(db *bolt.DB, b *batch) error {
	return db.Update(func(tx *bolt.Tx) error {
		for _, w := range []struct {
			bucket *bolt.Bucket
			kv     map[string][]byte
		}{{tx.Bucket(bucketRuns), b.runs}, {tx.Bucket(bucketSteps), b.steps}} {
			// Step keys of one run grow at the end: pack pages full.
			w.bucket.FillPercent = 0.9
			for _, k := range slices.Sorted(maps.Keys(w.kv)) {
				if err := w.bucket.Put([]byte(k), w.kv[k]); err != nil {
					return err
				}
			}
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

// loadRun reads one run (header and steps) from the checkpoint; nil when the
// checkpoint does not hold it.
func loadRun(tx *bolt.Tx, id string) (*Run, error) {
	v := tx.Bucket(bucketRuns).Get([]byte(id))
	if v == nil {
		return nil, nil
	}
	r := new(Run)
	if err := json.Unmarshal(v, r); err != nil {
		return nil, fmt.Errorf("checkpoint of run %s: %w", id, err)
	}
	prefix := append([]byte(id), 0)
	c := tx.Bucket(bucketSteps).Cursor()
	for k, v := c.Seek(prefix); k != nil && len(k) == len(prefix)+8 && string(k[:len(prefix)]) == string(prefix); k, v = c.Next() {
		var s Step
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, fmt.Errorf("checkpoint of run %s step %x: %w", id, k[len(prefix):], err)
		}
		r.Steps = append(r.Steps, s)
	}
	for i := range r.Steps {
		if r.Steps[i].N != i+1 {
			return nil, fmt.Errorf("checkpoint of run %s: step %d at position %d: %w", id, r.Steps[i].N, i+1, ErrInconsistent)
		}
	}
	return r, nil
}

// encodeHeader encodes a run without its steps.
func encodeHeader(r *Run) ([]byte, error) {
	h := *r
	h.Steps = nil
	return json.Marshal(&h)
}
