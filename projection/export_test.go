package projection

import (
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// FailWrites makes p's checkpoint writes fail (its database is swapped for
// a closed one) until the returned restore is called.
func (p *Projector) FailWrites(t *testing.T) (restore func()) {
	closed, err := bolt.Open(filepath.Join(t.TempDir(), "closed.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := closed.Close(); err != nil {
		t.Fatal(err)
	}
	good := p.db
	p.db = closed
	return func() { p.db = good }
}

// AppendStep is the checkpoint's step encoder.
func AppendStep(s *Step) ([]byte, error) { return appendStep(nil, s) }

// InMemory reports whether the projector holds run in memory.
func (p *Projector) InMemory(run string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.runs[run]
	return ok
}

// Stubs counts the steps of run the projector holds only in the
// checkpoint (as stubs {N, Final: true} in memory).
func (p *Projector) Stubs(run string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.runs[run]; !ok {
		return 0
	}
	return len(p.lazy[run].list())
}
