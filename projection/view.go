package projection

import bolt "go.etcd.io/bbolt"

// View calls fn with the run while holding the projector's lock, so fn sees
// a consistent run; fn must not keep r, block, or call the projector (its
// lock is held). It reports whether the run exists. A run loaded from the
// checkpoint has its last step whole and earlier ones as stubs {N, Final:
// true}: use ViewStep or ViewWhole to read an earlier step's calls.
func (p *Projector) View(id string, fn func(r *Run)) (bool, error) {
	return p.view(id, false, 0, fn)
}

// ViewStep is View with step n of the run whole.
func (p *Projector) ViewStep(id string, n int, fn func(r *Run)) (bool, error) {
	return p.view(id, false, n, fn)
}

// ViewWhole is View with every step of the run whole.
func (p *Projector) ViewWhole(id string, fn func(r *Run)) (bool, error) {
	return p.view(id, true, 0, fn)
}

// ViewCold is ViewStep that keeps no run it had to read from the checkpoint:
// for reads that pass over many runs once (a page of tickets), which must
// not fill the memory with runs nobody is working on.
func (p *Projector) ViewCold(id string, n int, fn func(r *Run)) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, hot := p.runs[id]; hot {
		return p.viewLocked(id, false, n, fn)
	}
	var (
		r    *Run
		lazy stubs
	)
	err := p.db.View(func(tx *bolt.Tx) error {
		var err error
		if r, lazy, err = loadRun(tx, &p.bl, id); err != nil || r == nil || !lazy.has(n) {
			return err
		}
		return decodeStep(r, n, tx.Bucket(bucketSteps).Get(stepKey(id, n)))
	})
	if err != nil || r == nil {
		return false, err
	}
	fn(r)
	return true, nil
}

// view is View with every step whole first, or step n.
func (p *Projector) view(id string, whole bool, n int, fn func(r *Run)) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.viewLocked(id, whole, n, fn)
}

// viewLocked is view under the projector's lock.
func (p *Projector) viewLocked(id string, whole bool, n int, fn func(r *Run)) (bool, error) {
	r, err := p.runLocked(id)
	if err != nil || r == nil {
		return false, err
	}
	if whole {
		err = p.decodeLocked(r, p.lazy[id].list()...)
	} else {
		err = p.decodeLocked(r, n)
	}
	if err != nil {
		return false, err
	}
	fn(r)
	return true, nil
}
