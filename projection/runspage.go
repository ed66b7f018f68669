package projection

import (
	"slices"

	bolt "go.etcd.io/bbolt"
)

// RunsPage returns up to limit runs (at least one) whose ids come after
// after ("" for the first page), ordered by id (so by start time), and
// whether more follow: ask again with after set to the last id returned.
// It reads only the runs of the page from the checkpoint, not every run
// (see [Projector.Runs]).
func (p *Projector) RunsPage(after string, limit int) ([]Summary, bool, error) {
	limit = max(limit, 1)
	p.mu.Lock()
	defer p.mu.Unlock()
	var mem []string // the runs in memory past after, in order
	for id := range p.runs {
		if id > after {
			mem = append(mem, id)
		}
	}
	slices.Sort(mem)
	out := make([]Summary, 0, min(limit, 256))
	more := false
	err := p.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketRuns).Cursor()
		k, _ := c.Seek([]byte(after))
		if k != nil && string(k) == after {
			k, _ = c.Next()
		}
		for i := 0; i < len(mem) || k != nil; {
			var id string
			inMem := i < len(mem) && (k == nil || mem[i] <= string(k))
			if inMem {
				id = mem[i]
				i++
				if k != nil && string(k) == id {
					k, _ = c.Next()
				}
			} else {
				id = string(k)
				k, _ = c.Next()
			}
			if len(out) == limit {
				more = true
				return nil
			}
			if inMem {
				out = append(out, p.runs[id].Summary())
				continue
			}
			r, _, err := loadRun(tx, &p.bl, id)
			if err != nil {
				return err
			}
			if r != nil {
				out = append(out, r.Summary())
			}
		}
		return nil
	})
	return out, more, err
}
