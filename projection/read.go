package projection

import bolt "go.etcd.io/bbolt"

// The read model: a reader gets values, never a callback under the
// projector's lock. Header and Step share with the projection only what its
// fold never changes again (see RunHeader), so they cost a struct copy;
// Run is a deep copy the caller owns.

// Header returns the run's header (see [RunHeader]) and whether the run
// exists. A run read from the checkpoint stays in memory: the engine reads
// a header to work on the run.
func (p *Projector) Header(id string) (RunHeader, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r, err := p.runLocked(id)
	if err != nil || r == nil {
		return RunHeader{}, false, err
	}
	return r.Header(), true, nil // the last step is never a stub (see loadRun, letGo)
}

// HeaderCold is Header that keeps no run it had to read from the
// checkpoint: for reads that pass over many runs once (a page of tickets),
// which must not fill the memory with runs nobody is working on.
func (p *Projector) HeaderCold(id string) (RunHeader, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r, hot := p.runs[id]; hot {
		return r.Header(), true, nil
	}
	r, _, err := p.loadCold(id)
	if err != nil || r == nil {
		return RunHeader{}, false, err
	}
	return r.Header(), true, nil
}

// Step returns step n of the run, and whether the run has it. A step the
// projector holds only in the checkpoint is read from there into the value,
// and neither it nor its run is kept in memory.
func (p *Projector) Step(id string, n int) (Step, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r, hot := p.runs[id]
	if !hot {
		cold, lazy, err := p.loadCold(id)
		if err != nil || cold == nil {
			return Step{}, false, err
		}
		s, err := p.stepLocked(cold, lazy, n)
		return s, err == nil && s.N == n, err
	}
	s, err := p.stepLocked(r, p.lazy[id], n)
	return s, err == nil && s.N == n, err
}

// stepLocked returns step n of r, read from the checkpoint when lazy says
// it is a stub there; the zero Step when r has no step n.
func (p *Projector) stepLocked(r *Run, lazy stubs, n int) (Step, error) {
	s := r.Step(n)
	if s == nil {
		return Step{}, nil
	}
	if !lazy.has(n) {
		return s.Snapshot(), nil
	}
	var out Step
	err := p.db.View(func(tx *bolt.Tx) error {
		var err error
		out, err = parseStep(r.ID, n, tx.Bucket(bucketSteps).Get(stepKey(r.ID, n)))
		return err
	})
	return out, err
}

// Run returns a deep copy of the run with every step whole, and whether the
// run exists: for show and verify. Steps still in the checkpoint are read
// into the copy, not into the projection, and the copy is made outside the
// projector's lock.
func (p *Projector) Run(id string) (*Run, bool, error) {
	snap, err := p.runSnapshot(id)
	if err != nil || snap == nil {
		return nil, false, err
	}
	cp, err := snap.Clone()
	if err != nil {
		return nil, false, err
	}
	return cp, true, nil
}

// runSnapshot is the run with its steps slice copied and every stub read
// from the checkpoint into the copy: a value sharing only what the fold no
// longer changes in place.
func (p *Projector) runSnapshot(id string) (*Run, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r, err := p.runLocked(id)
	if err != nil || r == nil {
		return nil, err
	}
	snap := *r
	if r.Steps != nil {
		snap.Steps = make([]Step, len(r.Steps))
		for i := range r.Steps {
			snap.Steps[i] = r.Steps[i].Snapshot()
		}
	}
	lazy := p.lazy[id]
	if lazy.empty() {
		return &snap, nil
	}
	err = p.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketSteps)
		for _, n := range lazy.list() {
			if n > len(snap.Steps) {
				continue
			}
			if err := decodeStep(&snap, n, b.Get(stepKey(id, n))); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &snap, nil
}
