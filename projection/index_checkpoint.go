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
	b.pending = map[string][]byte{}
	for id := range p.idxDirty.pending {
		var v []byte // nil: resolved, deleted
		if t, ok := p.idx.pending.byID[id]; ok {
			v = encodePending(t)
		}
		b.pending[id] = v
	}
	b.open = map[string]bool{}
	for run := range p.idxDirty.open {
		b.open[run] = p.idx.open[run]
	}
	if p.idxDirty.sets {
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
		// A copy: it is encoded outside the lock (up to 1000 entries of
		// three texts of 512 bytes each, about 1.5 MB, every checkpoint
		// after a stray message).
		b.quarantine = &Quarantine{Total: p.idx.quarantine.Total, Recent: slices.Clone(p.idx.quarantine.Recent)}
	}
	b.takenIdx, p.idxDirty = p.idxDirty, newIndexDirt()
	return nil
}

// writeIndexes writes the index part of a batch in tx.
func writeIndexes(tx *bolt.Tx, b *batch) error {
	// Ticket ids are ULIDs: they mostly grow, so pages can be packed full.
	tx.Bucket(bucketTickets).FillPercent, tx.Bucket(bucketPending).FillPercent = 0.9, 0.9
	if err := writeRegistry(tx, b.scopes); err != nil {
		return err
	}
	if b.quarantine != nil {
		v, err := encodeQuarantine(*b.quarantine)
		if err != nil {
			return err
		}
		if err := tx.Bucket(bucketMeta).Put(keyQuarantine, v); err != nil {
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
	if err := writeSet(tx.Bucket(bucketPending), b.pending); err != nil {
		return err
	}
	open := make(map[string][]byte, len(b.open))
	for run, in := range b.open {
		if in {
			open[run] = []byte{}
		} else {
			open[run] = nil
		}
	}
	if err := writeSet(tx.Bucket(bucketOpen), open); err != nil {
		return err
	}
	if b.outputs == nil {
		return nil
	}
	if err := tx.DeleteBucket(bucketOutputs); err != nil {
		return err
	}
	if _, err := tx.CreateBucket(bucketOutputs); err != nil {
		return err
	}
	for path, v := range b.outputs {
		if err := tx.Bucket(bucketOutputs).Put([]byte(path), v); err != nil {
			return err
		}
	}
	return nil
}

// writeSet puts every key of kv with a value, and deletes every key whose
// value is nil, in key order.
func writeSet(b *bolt.Bucket, kv map[string][]byte) error {
	for _, k := range slices.Sorted(maps.Keys(kv)) {
		var err error
		if v := kv[k]; v == nil {
			err = b.Delete([]byte(k))
		} else {
			err = b.Put([]byte(k), v)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// loadIndexes reads the indexes at Open.
func loadIndexes(tx *bolt.Tx, idx *indexes) error {
	load := func(name []byte, fn func(k, v []byte) error) error { return tx.Bucket(name).ForEach(fn) }
	// The tickets bucket (every ticket ever issued) is not loaded: TicketRun
	// reads it when asked.
	err := load(bucketPending, func(k, v []byte) error { return loadPending(tx, idx, string(k), v) })
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
