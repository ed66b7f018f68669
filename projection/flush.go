package projection

import "fmt"

// Flush writes a checkpoint of everything applied so far.
func (p *Projector) Flush() error {
	p.flushMu.Lock()
	defer p.flushMu.Unlock()
	b, err := p.takeBatch()
	if err != nil || b == nil {
		return err
	}
	if err := writeBatch(p.db, b); err != nil {
		p.mu.Lock()
		p.pending = p.opts.FlushEvery // retry at the next commit
		p.mu.Unlock()
		return fmt.Errorf("write checkpoint at stream sequence %d: %w", b.seq, err)
	}
	return nil
}

// takeBatch encodes the dirty state under the lock and clears it.
func (p *Projector) takeBatch() (*batch, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pending == 0 && len(p.dirty) == 0 && !p.idxDirty.any() {
		return nil, nil
	}
	b := &batch{seq: p.seq, runs: map[string][]byte{}, steps: map[string][]byte{}}
	for id, steps := range p.dirty {
		r := p.runs[id]
		h, err := encodeHeader(r)
		if err != nil {
			return nil, err
		}
		b.runs[id] = h
		for n := range steps {
			if err := p.decodeLocked(r, n); err != nil { // never write a stub back
				return nil, err
			}
			s, err := jsonMarshal(r.Step(n))
			if err != nil {
				return nil, err
			}
			b.steps[string(stepKey(id, n))] = s
		}
	}
	if err := p.takeIndexes(b); err != nil {
		return nil, err
	}
	p.dirty = map[string]map[int]bool{}
	p.pending = 0
	return b, nil
}
