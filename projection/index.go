package projection

import (
	"maps"
	"slices"

	"github.com/stepgate/stepgate/events"
	bolt "go.etcd.io/bbolt"
)

// indexes are the projections that span runs: which run holds a ticket,
// which tickets wait for an answer, which runs have a step left open (what
// recovery looks at), and the saved approvals of every project. They are
// small, so they live in memory whole and load at Open.
type indexes struct {
	// tickets maps the tickets issued since the last checkpoint to their
	// runs; earlier ones are read from the checkpoint when asked for.
	tickets map[string]string
	pending pendingIndex // unresolved tickets, in order
	// open is the runs with a step that is not final, unless all that step
	// waits for is a person's answer (recovery has nothing to do there).
	open     map[string]bool
	grants   Grants
	outputs  map[string]events.OutputFileStored // output files kept, by path
	registry Registry                           // the location layer
	// quarantine is every message the folds skipped (the latest listed).
	quarantine Quarantine
	// migrated is the pending tickets loaded from an older checkpoint form,
	// to write again in the new one.
	migrated []string
}

func newIndexes() indexes {
	return indexes{tickets: map[string]string{}, pending: newPendingIndex(), open: map[string]bool{},
		grants: Grants{}, outputs: map[string]events.OutputFileStored{}, registry: Registry{}}
}

// indexDirt is what changed in the indexes since the last checkpoint.
type indexDirt struct {
	tickets map[string]bool // ticket ids to write
	grants  map[string]bool // grant ids to write
	scopes  map[string]bool // registry scopes to write
	pending map[string]bool // pending ticket ids to write (or delete)
	open    map[string]bool // open runs to write (or delete)
	sets    bool            // outputs are rewritten whole
	// quarantine says the quarantine changed (it is rewritten whole).
	quarantine bool
}

func (d indexDirt) any() bool {
	return d.sets || d.quarantine || len(d.tickets) > 0 || len(d.grants) > 0 || len(d.scopes) > 0 ||
		len(d.pending) > 0 || len(d.open) > 0
}

// add marks what o marks too.
func (d *indexDirt) add(o indexDirt) {
	maps.Copy(d.tickets, o.tickets)
	maps.Copy(d.grants, o.grants)
	maps.Copy(d.scopes, o.scopes)
	maps.Copy(d.pending, o.pending)
	maps.Copy(d.open, o.open)
	d.sets = d.sets || o.sets
	d.quarantine = d.quarantine || o.quarantine
}

func newIndexDirt() indexDirt {
	return indexDirt{tickets: map[string]bool{}, grants: map[string]bool{}, scopes: map[string]bool{},
		pending: map[string]bool{}, open: map[string]bool{}}
}

var (
	bucketTickets = []byte("tickets")
	bucketPending = []byte("pending")
	bucketOpen    = []byte("open")
	bucketGrants  = []byte("grants")
	bucketOutputs = []byte("outputs")
)

// indexRun updates the indexes after r folded c.
func (p *Projector) indexRun(r *Run, c *events.Commit) {
	if p.idx.foldRun(r, c, &p.idxDirty) {
		p.grantVer.Add(1)
	}
}

// foldRun folds into the indexes what run r's commit c (just folded into r)
// holds for them, marking it in d; it reports whether a grant changed. The
// projector and [Rebuild] both fold through it.
func (x *indexes) foldRun(r *Run, c *events.Commit, d *indexDirt) (grants bool) {
	for _, e := range c.Events {
		switch e := e.(type) {
		case events.TicketIssued:
			x.tickets[e.ID] = r.ID
			x.pending.add(pendingTicket(r.ID, c.Step, e))
			d.tickets[e.ID], d.pending[e.ID] = true, true
		case events.TicketResolved:
			x.pending.remove(e.Ticket)
			d.pending[e.Ticket] = true
		case events.ApprovalSaved, events.GrantRevoked:
			if id := x.grants.Apply(e); id != "" {
				d.grants[id] = true
				grants = true
			}
		case events.OutputFileStored:
			x.outputs[e.Path] = e
			d.sets = true
		}
	}
	if open := needsRecovery(r); open != x.open[r.ID] {
		if open {
			x.open[r.ID] = true
		} else {
			delete(x.open, r.ID)
		}
		d.open[r.ID] = true
	}
	return grants
}

// needsRecovery reports whether a crash could have left something of the
// run's last step for a host to settle: the step is not final and not all
// it waits for is a person's answer. A step whose every open call has a
// pending ticket has nothing in doubt (no such call was cleared to run), so
// a hundred thousand runs waiting on tickets cost recovery nothing.
func needsRecovery(r *Run) bool {
	last := r.Step(len(r.Steps))
	if r.Status == StatusEnded || last == nil || last.Final {
		return false
	}
	if r.Status != StatusAwaiting {
		return true
	}
	for i := range last.Calls {
		c := &last.Calls[i]
		if c.Terminal() {
			continue
		}
		if t := r.Ticket(c.Ticket); c.Ticket == "" || t == nil || !t.Pending() {
			return true
		}
	}
	return false
}

// indexOutside folds the events of a commit outside any run: grants,
// output-file sweeps and the registry's location layer.
func (p *Projector) indexOutside(seq uint64, c *events.Commit) {
	registry, grants := p.idx.foldOutside(seq, c, &p.idxDirty)
	if registry {
		p.regVer.Add(1)
	}
	if grants {
		p.grantVer.Add(1)
	}
}

// foldOutside folds a commit outside any run at seq into the indexes,
// marking it in d; it reports whether the registry and the grants changed.
// The projector and [Rebuild] both fold through it.
func (x *indexes) foldOutside(seq uint64, c *events.Commit, d *indexDirt) (registry, grants bool) {
	for _, e := range c.Events {
		if scope := x.registry.Apply(seq, e); scope != "" {
			d.scopes[scope] = true
			registry = true
			continue
		}
		if sw, ok := e.(events.OutputFileSwept); ok {
			for _, path := range sw.Paths {
				delete(x.outputs, path)
			}
			d.sets = true
			continue
		}
		if id := x.grants.Apply(e); id != "" {
			d.grants[id] = true
			grants = true
		}
	}
	return registry, grants
}

// Registry returns the location layer's registrations in force, by name,
// and the layer's version: it changes whenever the layer does.
func (p *Projector) Registry() (map[string]Registration, uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.idx.registry.Effective(), p.regVer.Load()
}

// ScopeClosed reports whether the location layer's scope was closed: a
// closed scope stays closed, so registering in it again changes nothing.
func (p *Projector) ScopeClosed(scope string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.idx.registry[scope]
	return s != nil && s.Closed
}

// RegistryVersion returns the location layer's version (see Registry). It
// takes no lock.
func (p *Projector) RegistryVersion() uint64 { return p.regVer.Load() }

// GrantsVersion changes whenever a saved approval is saved or revoked. It
// takes no lock.
func (p *Projector) GrantsVersion() uint64 { return p.grantVer.Load() }

// Outputs returns the output files the log says are kept, by path.
func (p *Projector) Outputs() map[string]events.OutputFileStored {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.idx.outputs)
}

// TicketRun returns the run a ticket belongs to ("" when no run issued it,
// or the checkpoint cannot be read).
func (p *Projector) TicketRun(ticket string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if run, ok := p.idx.tickets[ticket]; ok {
		return run
	}
	if t, ok := p.idx.pending.byID[ticket]; ok {
		return t.Run
	}
	run := ""
	if err := p.db.View(func(tx *bolt.Tx) error {
		run = string(tx.Bucket(bucketTickets).Get([]byte(ticket)))
		return nil
	}); err != nil {
		p.log.Warn("reading a ticket's run from the checkpoint", "ticket", ticket, "err", err)
	}
	return run
}

// OpenRuns returns the runs that have a step left open, sorted: those a
// recovery looks at. A run whose open step waits only for answers to its
// tickets is not among them (nothing of it is in doubt).
func (p *Projector) OpenRuns() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Sorted(maps.Keys(p.idx.open))
}

// Grants returns the grants in force for a project ("" for every project,
// each project's de-duplicated on its own).
func (p *Projector) Grants(project string) []Grant {
	p.mu.Lock()
	defer p.mu.Unlock()
	return activeGrants(p.idx.grants, project)
}

// Grant returns one grant by id, revoked or not.
func (p *Projector) Grant(id string) (Grant, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	g, ok := p.idx.grants[id]
	if !ok {
		return Grant{}, false
	}
	return *g, true
}
