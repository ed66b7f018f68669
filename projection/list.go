package projection

import (
	"sort"

	bolt "go.etcd.io/bbolt"
)

// Runs lists every run known to the projection, ordered by id (so by start
// time).
func (p *Projector) Runs() ([]Summary, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	seen := map[string]bool{}
	var out []Summary
	add := func(r *Run) {
		seen[r.ID] = true
		out = append(out, r.Summary())
	}
	for _, r := range p.runs {
		add(r)
	}
	err := p.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketRuns).ForEach(func(k, _ []byte) error {
			if seen[string(k)] {
				return nil
			}
			r, _, err := loadRun(tx, &p.bl, string(k))
			if err != nil {
				return err
			}
			add(r)
			return nil
		})
	})
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, err
}

// All returns a deep copy of every run, for verification and tests.
func (p *Projector) All() (map[string]*Run, error) {
	sums, err := p.Runs()
	if err != nil {
		return nil, err
	}
	out := make(map[string]*Run, len(sums))
	for _, s := range sums {
		cp, ok, err := p.Run(s.ID)
		if err != nil {
			return nil, err
		}
		if ok {
			out[s.ID] = cp
		}
	}
	return out, nil
}
