package projection

import (
	"maps"
	"slices"
)

// Projections returns every projection this projector holds, at its
// sequence, in the form [Rebuild] returns: `engine verify` compares the two
// field by field. The runs are read from the checkpoint and memory ([Projector.All]);
// the indexes are deep copies.
func (p *Projector) Projections() (*Rebuilt, error) {
	runs, err := p.All()
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return &Rebuilt{Seq: p.seq, Runs: runs, Registry: cloneRegistry(p.idx.registry), Grants: cloneGrants(p.idx.grants),
		Outputs: maps.Clone(p.idx.outputs), Open: slices.Sorted(maps.Keys(p.idx.open)),
		Quarantine: p.idx.quarantine.UpTo(p.seq)}, nil
}

func cloneRegistry(g Registry) Registry {
	out := make(Registry, len(g))
	for id, s := range g {
		out[id] = &Scope{Registrations: slices.Clone(s.Registrations), Closed: s.Closed}
	}
	return out
}

func cloneGrants(g Grants) Grants {
	out := make(Grants, len(g))
	for id, gr := range g {
		cp := *gr
		if gr.Revoked != nil {
			rv := *gr.Revoked
			cp.Revoked = &rv
		}
		out[id] = &cp
	}
	return out
}

// ActiveAt is the grants in force for a project in a rebuild ("" for every
// project, each de-duplicated on its own), as [Projector.Grants] lists them.
func (b *Rebuilt) ActiveAt(project string) []Grant { return activeGrants(b.Grants, project) }

// activeGrants is the grants of g in force for a project ("" for every
// project, each project's de-duplicated on its own).
func activeGrants(g Grants, project string) []Grant {
	if project != "" {
		return g.Active(project)
	}
	projects := map[string]bool{}
	for _, gr := range g {
		projects[gr.Project] = true
	}
	var out []Grant
	for _, pr := range slices.Sorted(maps.Keys(projects)) {
		out = append(out, g.Active(pr)...)
	}
	return out
}
