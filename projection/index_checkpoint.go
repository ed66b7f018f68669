package projection

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/stepgate/stepgate/events"
	bolt "go.etcd.io/bbolt"
)

// takeIndexes encodes what changed in the indexes; called under p.mu.
func (p *Projector) takeIndexes(b *batch) error {
	b.tickets = map[string]string{}
	for id := range p.idxDirty.tickets {
		b.tickets[id] = p.idx.tickets[id]
	}
	b.scopes = map[string][]byte{}
	for id := range p.idxDirty.scopes {
		v, err := json.Marshal(p.idx.registry[id])
		if err != nil {
			return err
		}
		b.scopes[id] = v
	}
	b.grants = map[string][]byte{}
	for id := range p.idxDirty.grants {
		v, err := json.Marshal(p.idx.grants[id])
		if err != nil {
			return err
		}
		b.grants[id] = v
	}
	if p.idxDirty.sets {
		b.pending, b.open = maps.Clone(p.idx.pending), maps.Clone(p.idx.open)
		b.outputs = map[string][]byte{}
		for path, o := range p.idx.outputs {
			v, err := json.Marshal(o)
			if err != nil {
				return err
			}
			b.outputs[path] = v
		}
	}
	if p.idxDirty.quarantine {
		v, err := encodeQuarantine(p.idx.quarantine)
		if err != nil {
			return err
		}
		b.quarantine = v
	}
	b.takenIdx, p.idxDirty = p.idxDirty, newIndexDirt()
	return nil
}

// writeIndexes writes the index part of a batch in tx.
func writeIndexes(tx *bolt.Tx, b *batch) error {
	if err := writeRegistry(tx, b.scopes); err != nil {
		return err
	}
	if b.quarantine != nil {
		if err := tx.Bucket(bucketMeta).Put(keyQuarantine, b.quarantine); err != nil {
			return err
		}
	}
	for _, id := range slices.Sorted(maps.Keys(b.tickets)) {
		if err := tx.Bucket(bucketTickets).Put([]byte(id), []byte(b.tickets[id])); err != nil {
			return err
		}
	}
	for _, id := range slices.Sorted(maps.Keys(b.grants)) {
		if err := tx.Bucket(bucketGrants).Put([]byte(id), b.grants[id]); err != nil {
			return err
		}
	}
	if b.pending == nil {
		return nil
	}
	for _, name := range [][]byte{bucketPending, bucketOpen, bucketOutputs} {
		if err := tx.DeleteBucket(name); err != nil {
			return err
		}
		if _, err := tx.CreateBucket(name); err != nil {
			return err
		}
	}
	for id, run := range b.pending {
		if err := tx.Bucket(bucketPending).Put([]byte(id), []byte(run)); err != nil {
			return err
		}
	}
	for run := range b.open {
		if err := tx.Bucket(bucketOpen).Put([]byte(run), nil); err != nil {
			return err
		}
	}
	for path, v := range b.outputs {
		if err := tx.Bucket(bucketOutputs).Put([]byte(path), v); err != nil {
			return err
		}
	}
	return nil
}

// loadIndexes reads the indexes at Open.
func loadIndexes(tx *bolt.Tx, idx *indexes) error {
	load := func(name []byte, fn func(k, v []byte) error) error { return tx.Bucket(name).ForEach(fn) }
	err := load(bucketTickets, func(k, v []byte) error { idx.tickets[string(k)] = string(v); return nil })
	if err == nil {
		err = load(bucketPending, func(k, v []byte) error { idx.pending[string(k)] = string(v); return nil })
	}
	if err == nil {
		err = load(bucketOpen, func(k, _ []byte) error { idx.open[string(k)] = true; return nil })
	}
	if err == nil {
		err = load(bucketGrants, func(k, v []byte) error {
			g := new(Grant)
			if err := json.Unmarshal(v, g); err != nil {
				return fmt.Errorf("checkpoint of grant %s: %w", k, err)
			}
			idx.grants[string(k)] = g
			return nil
		})
	}
	if err == nil {
		err = loadRegistry(tx, idx.registry)
	}
	if err == nil {
		err = loadQuarantine(tx, &idx.quarantine)
	}
	if err == nil {
		err = load(bucketOutputs, func(k, v []byte) error {
			var o events.OutputFileStored
			if err := json.Unmarshal(v, &o); err != nil {
				return fmt.Errorf("checkpoint of output file %s: %w", k, err)
			}
			idx.outputs[string(k)] = o
			return nil
		})
	}
	return err
}
