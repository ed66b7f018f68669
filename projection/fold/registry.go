package fold

import "github.com/stepgate/stepgate/events"

// Registration is one location-layer registration and the stream sequence
// it was committed at.
type Registration struct {
	events.ToolRegistered
	Seq uint64 `json:"seq"`
}

// Scope is one scope of the location layer.
type Scope struct {
	Registrations []Registration `json:"registrations"`
	Closed        bool           `json:"closed,omitempty"`
}

// Registry folds the location layer, by scope. The fold commutes: the
// effective registration of a name is the one with the highest sequence in
// a scope that is not closed, and closing is for ever — so hosts that fold
// registry commits and their own in different orders agree.
type Registry map[string]*Scope

// Apply folds one event committed at seq; it reports the scope it touched.
func (g Registry) Apply(seq uint64, e events.Event) string {
	switch e := e.(type) {
	case events.ToolRegistered:
		s := g.scope(e.Scope)
		for _, r := range s.Registrations {
			if r.Seq == seq && r.Name == e.Name {
				return e.Scope // folded already
			}
		}
		s.Registrations = append(s.Registrations, Registration{ToolRegistered: e, Seq: seq})
		return e.Scope
	case events.ScopeClosed:
		g.scope(e.Scope).Closed = true
		return e.Scope
	}
	return ""
}

func (g Registry) scope(id string) *Scope {
	s := g[id]
	if s == nil {
		s = &Scope{}
		g[id] = s
	}
	return s
}

// Effective returns the location layer's registration in force for each
// name: the latest one in a scope still open.
func (g Registry) Effective() map[string]Registration {
	out := map[string]Registration{}
	for _, s := range g {
		if s.Closed {
			continue
		}
		for _, r := range s.Registrations {
			if cur, ok := out[r.Name]; !ok || r.Seq > cur.Seq {
				out[r.Name] = r
			}
		}
	}
	return out
}
