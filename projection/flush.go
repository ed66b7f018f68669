package projection

import (
	"bytes"
	"fmt"

	"github.com/stepgate/stepgate/events"
)

// Flush writes a checkpoint of everything applied so far.
func (p *Projector) Flush() error {
	err := p.flush()
	p.flushBad.Store(err != nil)
	return err
}

func (p *Projector) flush() error {
	p.flushMu.Lock()
	defer p.flushMu.Unlock()
	b, err := p.takeBatch()
	if err != nil || b == nil {
		return err
	}
	if err := b.encodeFinal(); err != nil {
		p.requeue(b)
		return fmt.Errorf("checkpoint at stream sequence %d: %w", b.seq, err)
	}
	if err := writeBatch(p.db, b); err != nil {
		p.requeue(b)
		return fmt.Errorf("write checkpoint at stream sequence %d: %w", b.seq, err)
	}
	p.letGo(b)
	return nil
}

// letGo lets go of what a checkpoint has just written and nothing needs in
// memory: the final steps become stubs {N, Final: true}, read back from the
// checkpoint when someone asks for them — as after a restart — and a run
// that ended, or waits for a person's answer, leaves memory altogether, to
// be loaded again if anyone asks. A run's last step stays whole, so a long
// run holds a stub per step instead of every call, argument and result it
// ever made, and a host that has run many, or has many waiting, holds only
// the ones still going: a waiting run costs its index entries.
func (p *Projector) letGo(b *batch) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for ref := range b.blobs {
		p.bl.stored[ref] = true
	}
	for id := range b.tickets {
		if !p.idxDirty.tickets[id] {
			delete(p.idx.tickets, id) // in the checkpoint now
		}
	}
	for id, r := range p.runs {
		if _, dirty := p.dirty[id]; (r.Status == StatusEnded || r.Status == StatusAwaiting) && !dirty {
			delete(p.runs, id)
			delete(p.lazy, id)
		}
	}
	for _, f := range b.final {
		r, n := p.runs[f.run], f.step.N
		if r == nil || n >= len(r.Steps) || !r.Steps[n-1].Final || p.dirty[f.run][n] {
			continue
		}
		r.Steps[n-1] = Step{N: n, Final: true}
		lazy := p.lazy[f.run]
		lazy.add(n)
		p.lazy[f.run] = lazy
	}
}

// requeue marks everything a failed checkpoint took as dirty again, so
// the next one — tried at the next commit — writes it.
func (p *Projector) requeue(b *batch) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for run, steps := range b.taken {
		d := p.dirtyLocked(run)
		for n := range steps {
			d[n] = true
		}
	}
	p.idxDirty.add(b.takenIdx)
	p.pending = max(p.pending, p.opts.FlushEvery)
}

// takeBatch takes the dirty state under the lock and clears it. Final
// steps never change again, so they are only copied here and encoded after
// the lock is released (encoding is most of a checkpoint's work, and
// commands wait for this lock); open steps and run headers are encoded now.
// Only what exists is written: a mark for a run not in memory, or for a
// step its run does not have, has nothing to write and is dropped (the
// fold marks neither, see markLocked; a checkpoint never writes a step
// that is not there, and never stops on one).
func (p *Projector) takeBatch() (*batch, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pending == 0 && len(p.dirty) == 0 && !p.idxDirty.any() {
		return nil, nil
	}
	b := &batch{seq: p.seq, runs: map[string][]byte{}, steps: map[string][]byte{}, blobs: map[string][]byte{},
		taken: map[string]map[int]bool{}}
	for id, steps := range p.dirty {
		r := p.runs[id]
		if r == nil {
			p.log.Error("projection: a run marked for the checkpoint is not in memory; nothing to write", "run", id)
			continue
		}
		h, err := p.bl.encodeHeader(r, b.blobs)
		if err != nil {
			return nil, err
		}
		b.runs[id] = h
		taken := map[int]bool{}
		b.taken[id] = taken
		for n := range steps {
			if r.Step(n) == nil {
				p.log.Error("projection: a step marked for the checkpoint is not in its run; nothing to write", "run", id, "step", n, "steps", len(r.Steps))
				continue
			}
			if err := p.decodeLocked(r, n); err != nil { // never write a stub back
				return nil, err
			}
			taken[n] = true
			st := r.Step(n)
			if st.Final {
				b.final = append(b.final, finalStep{run: id, step: *st})
				continue
			}
			s, err := appendStep(nil, st)
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

// finalStep is a final step taken for a checkpoint, not yet encoded.
type finalStep struct {
	run  string
	step Step
}

// encodeFinal encodes the batch's final steps into its step writes, each
// through one scratch buffer into a value of its exact size.
func (b *batch) encodeFinal() error {
	var scratch []byte
	for _, f := range b.final {
		var err error
		if scratch, err = appendStep(scratch[:0], &f.step); err != nil {
			return fmt.Errorf("run %s step %d: %w", f.run, f.step.N, err)
		}
		b.steps[string(stepKey(f.run, f.step.N))] = bytes.Clone(scratch)
	}
	return nil
}

// markLocked marks what commit c changed of run r for the next
// checkpoint: its header, the step c names if r has it, and every step c
// began (r had before steps). A commit may name a step its run does not
// have and still fold (one whose only events this build cannot read, for
// the step the run would take next: the step does not begin), so the step
// is marked only if it is there.
func (p *Projector) markLocked(r *Run, c *events.Commit, before int) {
	d := p.dirtyLocked(r.ID)
	if r.Step(c.Step) != nil {
		d[c.Step] = true
	}
	for n := before + 1; n <= len(r.Steps); n++ {
		d[n] = true
	}
}

// dirtyLocked returns the steps of run to write at the next checkpoint,
// marking the run's header to be written too. Only markLocked and requeue
// (which puts back what takeBatch took) mark steps.
func (p *Projector) dirtyLocked(run string) map[int]bool {
	d := p.dirty[run]
	if d == nil {
		d = map[int]bool{}
		p.dirty[run] = d
	}
	return d
}
