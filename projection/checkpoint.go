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
	scopes  map[string][]byte
	pending map[string]string // nil: unchanged (with open and outputs)
	open    map[string]bool
	outputs map[string][]byte
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

// loadRun reads one run from the checkpoint; nil when the checkpoint does
// not hold it. Only the run's last step is decoded: every earlier step is
// final, and comes back as a stub {N, Final} with its encoded form in lazy,
// decoded when someone asks for it (see Projector.decodeLocked). A run of ten
// thousand steps loads in the time of one.
func loadRun(tx *bolt.Tx, id string) (r *Run, lazy map[int][]byte, err error) {
	v := tx.Bucket(bucketRuns).Get([]byte(id))
	if v == nil {
		return nil, nil, nil
	}
	r = new(Run)
	if err := json.Unmarshal(v, r); err != nil {
		return nil, nil, fmt.Errorf("checkpoint of run %s: %w", id, err)
	}
	prefix := append([]byte(id), 0)
	c := tx.Bucket(bucketSteps).Cursor()
	lazy = map[int][]byte{}
	for k, v := c.Seek(prefix); k != nil && len(k) == len(prefix)+8 && string(k[:len(prefix)]) == string(prefix); k, v = c.Next() {
		n := int(binary.BigEndian.Uint64(k[len(prefix):]))
		if n != len(r.Steps)+1 {
			return nil, nil, fmt.Errorf("checkpoint of run %s: step %d at position %d: %w", id, n, len(r.Steps)+1, ErrInconsistent)
		}
		r.Steps = append(r.Steps, Step{N: n, Final: true})
		lazy[n] = slices.Clone(v) // bbolt's bytes live only as long as tx
	}
	if last := len(r.Steps); last > 0 {
		if err := decodeStep(r, lazy, last); err != nil {
			return nil, nil, err
		}
	}
	return r, lazy, nil
}

// decodeStep replaces stub step n of r with its decoded form from lazy.
func decodeStep(r *Run, lazy map[int][]byte, n int) error {
	raw, ok := lazy[n]
	if !ok {
		return nil
	}
	var s Step
	if err := json.Unmarshal(raw, &s); err != nil {
		return fmt.Errorf("checkpoint of run %s step %d: %w", r.ID, n, err)
	}
	if s.N != n {
		return fmt.Errorf("checkpoint of run %s: step %d stored as %d: %w", r.ID, s.N, n, ErrInconsistent)
	}
	r.Steps[n-1] = s
	delete(lazy, n)
	return nil
}

// encodeHeader encodes a run without its steps.
func encodeHeader(r *Run) ([]byte, error) {
	h := *r
	h.Steps = nil
	return json.Marshal(&h)
}
