package fold

import (
	"slices"

	"github.com/stepgate/stepgate/events"
)

// Grant is a saved approval and, once withdrawn, its revocation.
type Grant struct {
	events.ApprovalSaved
	Revoked *events.GrantRevoked `json:"revoked,omitempty"`
}

// Grants folds saved approvals, keyed by grant id. The fold commutes: a
// revocation seen before its approval (two hosts, two subjects) leaves a
// tombstone that the approval fills in, revoked. So the order in which a
// host folds run commits and grant commits does not matter.
type Grants map[string]*Grant

// Apply folds one event; it reports the grant id it touched, or "".
func (g Grants) Apply(e events.Event) string {
	switch e := e.(type) {
	case events.ApprovalSaved:
		if cur := g[e.ID]; cur != nil {
			cur.ApprovalSaved = e
		} else {
			g[e.ID] = &Grant{ApprovalSaved: e}
		}
		return e.ID
	case events.GrantRevoked:
		if cur := g[e.ID]; cur != nil {
			if cur.Revoked == nil {
				cur.Revoked = &e
			}
		} else {
			g[e.ID] = &Grant{ApprovalSaved: events.ApprovalSaved{ID: e.ID, Project: e.Project}, Revoked: &e}
		}
		return e.ID
	}
	return ""
}

// Active returns the project's grants in force, oldest first, one per
// (action, resource): a grant saved twice counts once.
func (g Grants) Active(project string) []Grant {
	var out []Grant
	for _, gr := range g {
		if gr.Project == project && gr.Revoked == nil && gr.Action != "" {
			out = append(out, *gr)
		}
	}
	slices.SortFunc(out, func(a, b Grant) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	seen := map[[2]string]bool{}
	return slices.DeleteFunc(out, func(gr Grant) bool {
		k := [2]string{gr.Action, gr.Resource}
		dup := seen[k]
		seen[k] = true
		return dup
	})
}
