package projection

import (
	"slices"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/stepgate/stepgate/events"
)

// PendingTicket is an unresolved ticket as the pending index holds it:
// enough to list, filter and sweep it without loading its run.
type PendingTicket struct {
	ID       string     `json:"id"`
	Run      string     `json:"run"`
	Step     int        `json:"step"`
	Project  string     `json:"project,omitempty"`
	Tool     string     `json:"tool,omitempty"`
	Identity string     `json:"identity,omitempty"`
	Deadline *time.Time `json:"deadline,omitempty"`
}

// pendingTicket is the index entry of a ticket run issued in step n.
func pendingTicket(run string, n int, t events.TicketIssued) PendingTicket {
	return PendingTicket{ID: t.ID, Run: run, Step: n, Project: t.Project, Tool: t.Tool, Identity: t.Identity, Deadline: t.Deadline}
}

// pendingIndex is every unresolved ticket, ordered by id (ULIDs: by issue
// time), and ordered again within each project, tool and run, so that a
// page of any one filter reads only its page.
type pendingIndex struct {
	byID      map[string]*PendingTicket
	all       sortedSet
	byProject map[string]*sortedSet
	byTool    map[string]*sortedSet
	byRun     map[string]*sortedSet
	// strings holds one copy of each project, tool and identity read from
	// the checkpoint: a hundred thousand tickets share a few of each.
	strings map[string]string
}

func newPendingIndex() pendingIndex {
	return pendingIndex{byID: map[string]*PendingTicket{}, byProject: map[string]*sortedSet{},
		byTool: map[string]*sortedSet{}, byRun: map[string]*sortedSet{}, strings: map[string]string{}}
}

// intern returns the index's copy of b (made on first sight).
func (x *pendingIndex) intern(b []byte) string {
	if s, ok := x.strings[string(b)]; ok { // no allocation for the lookup
		return s
	}
	s := string(b)
	x.strings[s] = s
	return s
}

// add indexes t (replacing an entry of the same id).
func (x *pendingIndex) add(t PendingTicket) {
	x.remove(t.ID)
	t.Project, t.Tool, t.Identity = x.intern([]byte(t.Project)), x.intern([]byte(t.Tool)), x.intern([]byte(t.Identity))
	x.byID[t.ID] = &t
	x.all.insert(t.ID)
	for _, by := range []struct {
		m   map[string]*sortedSet
		key string
	}{{x.byProject, t.Project}, {x.byTool, t.Tool}, {x.byRun, t.Run}} {
		if by.key == "" {
			continue // no filter selects "": all is that order
		}
		s := by.m[by.key]
		if s == nil {
			s = &sortedSet{}
			by.m[by.key] = s
		}
		s.insert(t.ID)
	}
}

// remove drops ticket id; false when it was not pending.
func (x *pendingIndex) remove(id string) bool {
	t, ok := x.byID[id]
	if !ok {
		return false
	}
	delete(x.byID, id)
	x.all.remove(id)
	for _, by := range []struct {
		m   map[string]*sortedSet
		key string
	}{{x.byProject, t.Project}, {x.byTool, t.Tool}, {x.byRun, t.Run}} {
		if s := by.m[by.key]; s != nil && s.remove(id) && s.len() == 0 {
			delete(by.m, by.key)
		}
	}
	return true
}

// PendingQuery selects a page of pending tickets. Empty fields do not
// filter.
type PendingQuery struct {
	Project string
	Tool    string
	Run     string
	// IssuedBefore keeps the tickets issued before it (by the time in their
	// ULID; a ticket whose id is not a ULID is left out). Zero: any time.
	IssuedBefore time.Time
	// After is the id of the last ticket of the previous page: the page
	// starts above it.
	After string
	// Limit is the most tickets of the page (at least one).
	Limit int
}

// PendingTicket returns one unresolved ticket's index entry.
func (p *Projector) PendingTicket(id string) (PendingTicket, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t, ok := p.idx.pending.byID[id]
	if !ok {
		return PendingTicket{}, false
	}
	return *t, true
}

// page returns the tickets q selects, oldest first, and whether more follow.
// It walks the smallest of the orders the filters name, from q.After, and
// stops at q.Limit tickets or at the first one issued too late: a first
// page costs O(limit · log n) when its filters are those of one order.
func (x *pendingIndex) page(q PendingQuery) (out []PendingTicket, more bool) {
	set := &x.all
	for _, by := range []struct {
		m   map[string]*sortedSet
		key string
	}{{x.byRun, q.Run}, {x.byProject, q.Project}, {x.byTool, q.Tool}} {
		if by.key == "" {
			continue
		}
		s := by.m[by.key]
		if s == nil {
			return nil, false
		}
		if s.len() < set.len() {
			set = s
		}
	}
	bound, ok := q.bound()
	if !ok {
		return nil, false
	}
	limit := max(q.Limit, 1)
	set.ascend(q.After, func(id string) bool {
		if bound != "" && id >= bound {
			return false
		}
		t := x.byID[id]
		switch {
		case !q.matches(t):
			return true
		case bound != "" && !events.ValidID(id):
			return true
		case len(out) == limit:
			more = true
			return false
		}
		out = append(out, *t)
		return true
	})
	return out, more
}

// matches reports whether t passes q's run, project and tool filters.
func (q PendingQuery) matches(t *PendingTicket) bool {
	return (q.Run == "" || t.Run == q.Run) && (q.Project == "" || t.Project == q.Project) && (q.Tool == "" || t.Tool == q.Tool)
}

// bound returns the smallest ticket id IssuedBefore leaves out ("" when it
// is zero: no bound); false when IssuedBefore is before the ULID epoch, so
// that nothing is kept.
func (q PendingQuery) bound() (string, bool) {
	if q.IssuedBefore.IsZero() {
		return "", true
	}
	var u ulid.ULID
	if err := u.SetTime(ulid.Timestamp(q.IssuedBefore)); err != nil {
		return "", false
	}
	return u.String(), true
}

// Keeps reports whether q selects t, After and Limit aside: what a page
// would keep of it.
func (q PendingQuery) Keeps(t PendingTicket) bool {
	bound, ok := q.bound()
	return ok && q.matches(&t) && (bound == "" || t.ID < bound && events.ValidID(t.ID))
}

// PendingPage returns a page of the unresolved tickets q selects, oldest
// first, and whether more follow (ask again with After set to the last id).
func (p *Projector) PendingPage(q PendingQuery) ([]PendingTicket, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.idx.pending.page(q)
}

// PendingStats returns the number of unresolved tickets and the id of the
// oldest ("" when none): O(1), for metrics.
func (p *Projector) PendingStats() (n int, oldest string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.idx.pending.all.len(), p.idx.pending.all.first()
}

// eachPendingChunk is how many tickets EachPending copies under the
// projector's lock at a time: a host with 100,000 waiting runs held the lock
// about 13 ms for the sweeper's pass every second, and every step of every
// run waited behind it; a chunk holds it for a few microseconds.
const eachPendingChunk = 1024

// EachPending calls fn with every unresolved ticket, oldest first. It copies
// the index a chunk at a time under the projector's lock and calls fn
// outside it, with a copy: fn never runs under the lock, may call the
// projector, and may keep what it is given. A ticket resolved or issued
// during the walk may or may not be seen. It reads the index only, never a
// run (the sweeper looks for expired and stale tickets this way). It is the
// one method of the projector that takes a function: a walk of 100,000
// tickets in one slice would copy them all at once, and pages
// ([Projector.PendingPage]) are the way to read them a page at a time.
func (p *Projector) EachPending(fn func(t PendingTicket)) {
	batch := make([]PendingTicket, 0, eachPendingChunk)
	for after := ""; ; {
		batch = batch[:0]
		p.mu.Lock()
		p.idx.pending.all.ascend(after, func(id string) bool {
			batch = append(batch, *p.idx.pending.byID[id])
			return len(batch) < eachPendingChunk
		})
		p.mu.Unlock()
		for _, t := range batch {
			fn(t)
		}
		if len(batch) < eachPendingChunk {
			return
		}
		after = batch[len(batch)-1].ID
	}
}

// PendingRuns returns the runs with an unresolved ticket, of one project
// ("" for every project), sorted.
func (p *Projector) PendingRuns(project string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	seen := map[string]bool{}
	var out []string
	add := func(id string) bool {
		if run := p.idx.pending.byID[id].Run; !seen[run] {
			seen[run] = true
			out = append(out, run)
		}
		return true
	}
	if project == "" {
		p.idx.pending.all.ascend("", add)
	} else if s := p.idx.pending.byProject[project]; s != nil {
		s.ascend("", add)
	}
	slices.Sort(out)
	return out
}
