package fold_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection/fold"
	"pgregory.net/rapid"
)

// The grants fold commutes: any order of the same approvals and
// revocations gives the same grants in force.
func TestGrantsFoldCommutesProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var evs []events.Event
		for i := range rapid.IntRange(1, 8).Draw(t, "n") {
			id := rapid.SampledFrom([]string{"G1", "G2", "G3", "G4"}).Draw(t, "id")
			if rapid.Bool().Draw(t, "revoke") {
				evs = append(evs, events.GrantRevoked{ID: id, Project: "p"})
				continue
			}
			res := rapid.SampledFrom([]string{"*", "a", "b"}).Draw(t, "resource")
			evs = append(evs, events.ApprovalSaved{ID: id, Project: "p", Action: "echo", Resource: res, Ticket: string(rune('A' + i))})
		}
		// An id is saved once in a real log: keep the first save of each.
		seen := map[string]bool{}
		var log []events.Event
		for _, e := range evs {
			if a, ok := e.(events.ApprovalSaved); ok {
				if seen[a.ID] {
					continue
				}
				seen[a.ID] = true
			}
			log = append(log, e)
		}
		fold := func(order []events.Event) []fold.Grant {
			g := fold.Grants{}
			for _, e := range order {
				g.Apply(e)
			}
			return g.Active("p")
		}
		perm := rapid.Permutation(log).Draw(t, "order")
		if diff := cmp.Diff(fold(log), fold(perm)); diff != "" {
			t.Fatalf("grants depend on order (-log order +permuted):\n%s", diff)
		}
	})
}

func TestGrantsActiveDeduplicates(t *testing.T) {
	g := fold.Grants{}
	g.Apply(events.ApprovalSaved{ID: "G2", Project: "p", Action: "echo", Resource: "*"})
	g.Apply(events.ApprovalSaved{ID: "G1", Project: "p", Action: "echo", Resource: "*"})
	g.Apply(events.ApprovalSaved{ID: "G3", Project: "q", Action: "echo", Resource: "*"})
	got := g.Active("p")
	if len(got) != 1 || got[0].ID != "G1" {
		t.Errorf("Active(p) = %+v, want only the oldest grant G1", got)
	}
	g.Apply(events.GrantRevoked{ID: "G1", Project: "p"})
	if got := g.Active("p"); len(got) != 1 || got[0].ID != "G2" {
		t.Errorf("after revoking G1: %+v, want G2 in force", got)
	}
}
