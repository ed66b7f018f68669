package projection

import (
	"maps"
	"slices"

	"github.com/stepgate/stepgate/events"
)

// indexes are the projections that span runs: which run holds a ticket,
// which tickets wait for an answer, which runs have a step left open (what
// recovery looks at), and the saved approvals of every project. They are
// small, so they live in memory whole and load at Open.
type indexes struct {
	tickets  map[string]string // every ticket → its run
	pending  map[string]string // unresolved ticket → its run
	open     map[string]bool   // runs with a step that is not final
	grants   Grants
	outputs  map[string]events.OutputFileStored // output files kept, by path
	registry Registry                           // the location layer
	// quarantine is every message the folds skipped (the latest listed).
	quarantine Quarantine
}

func newIndexes() indexes {
	return indexes{tickets: map[string]string{}, pending: map[string]string{}, open: map[string]bool{},
		grants: Grants{}, outputs: map[string]events.OutputFileStored{}, registry: Registry{}}
}

// indexDirt is what changed in the indexes since the last checkpoint.
type indexDirt struct {
	tickets map[string]bool // ticket ids to write
	grants  map[string]bool // grant ids to write
	scopes  map[string]bool // registry scopes to write
	sets    bool            // pending, open and outputs are rewritten whole
	// quarantine says the quarantine changed (it is rewritten whole).
	quarantine bool
}

func (d indexDirt) any() bool {
	return d.sets || d.quarantine || len(d.tickets) > 0 || len(d.grants) > 0 || len(d.scopes) > 0
}

// add marks what o marks too.
func (d *indexDirt) add(o indexDirt) {
	maps.Copy(d.tickets, o.tickets)
	maps.Copy(d.grants, o.grants)
	maps.Copy(d.scopes, o.scopes)
	d.sets = d.sets || o.sets
	d.quarantine = d.quarantine || o.quarantine
}

func newIndexDirt() indexDirt {
	return indexDirt{tickets: map[string]bool{}, grants: map[string]bool{}, scopes: map[string]bool{}}
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
	for _, e := range c.Events {
		switch e := e.(type) {
		case events.TicketIssued:
			p.idx.tickets[e.ID], p.idx.pending[e.ID] = r.ID, r.ID
			p.idxDirty.tickets[e.ID], p.idxDirty.sets = true, true
		case events.TicketResolved:
			delete(p.idx.pending, e.Ticket)
			p.idxDirty.sets = true
		case events.ApprovalSaved, events.GrantRevoked:
			if id := p.idx.grants.Apply(e); id != "" {
				p.idxDirty.grants[id] = true
				p.grantVer.Add(1)
			}
		case events.OutputFileStored:
			p.idx.outputs[e.Path] = e
			p.idxDirty.sets = true
		}
	}
	last := r.Step(len(r.Steps))
	// Apply has just set the status: awaiting is "not ended, a ticket pending".
	open := r.Status == StatusAwaiting || (r.Status != StatusEnded && last != nil && !last.Final)
	if open != p.idx.open[r.ID] {
		if open {
			p.idx.open[r.ID] = true
		} else {
			delete(p.idx.open, r.ID)
		}
		p.idxDirty.sets = true
	}
}

// indexOutside folds the events of a commit outside any run: grants,
// output-file sweeps and the registry's location layer.
func (p *Projector) indexOutside(seq uint64, c *events.Commit) {
	for _, e := range c.Events {
		if scope := p.idx.registry.Apply(seq, e); scope != "" {
			p.idxDirty.scopes[scope] = true
			p.regVer.Add(1)
			continue
		}
		if sw, ok := e.(events.OutputFileSwept); ok {
			for _, path := range sw.Paths {
				delete(p.idx.outputs, path)
			}
			p.idxDirty.sets = true
			continue
		}
		if id := p.idx.grants.Apply(e); id != "" {
			p.idxDirty.grants[id] = true
			p.grantVer.Add(1)
		}
	}
}

// Registry returns the location layer's registrations in force, by name,
// and the layer's version: it changes whenever the layer does.
func (p *Projector) Registry() (map[string]Registration, uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.idx.registry.Effective(), p.regVer.Load()
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

// TicketRun returns the run a ticket belongs to ("" when no run issued it).
func (p *Projector) TicketRun(ticket string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.idx.tickets[ticket]
}

// Pending returns the unresolved tickets, each with its run, by ticket id.
func (p *Projector) Pending() map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.idx.pending)
}

// OpenRuns returns the runs that have a step left open, sorted.
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
	if project != "" {
		return p.idx.grants.Active(project)
	}
	projects := map[string]bool{}
	for _, g := range p.idx.grants {
		projects[g.Project] = true
	}
	var out []Grant
	for _, pr := range slices.Sorted(maps.Keys(projects)) {
		out = append(out, p.idx.grants.Active(pr)...)
	}
	return out
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
