package vocab

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/gate"
)

// A rule and a request survive the trip to the log and back unchanged:
// what the engine records is what a replay decides with.
func TestRoundTripProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.StringMatching(`[a-z*/ .]{0,8}`)
		rs := rapid.SliceOf(rapid.Custom(func(t *rapid.T) gate.Rule {
			return gate.Rule{Action: s.Draw(t, "action"), Resource: s.Draw(t, "resource"),
				Effect:    gate.Effect(rapid.SampledFrom([]string{"allow", "deny", "ask"}).Draw(t, "effect")),
				Source:    gate.Source(rapid.SampledFrom([]string{"", "builtin", "user", "project", "run", "saved", "protected"}).Draw(t, "source")),
				TicketTTL: rapid.SampledFrom([]string{"", "15m"}).Draw(t, "ttl")}
		})).Draw(t, "rules")
		if diff := cmp.Diff(rs, []gate.Rule(Rules(EventRules(rs))), cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("rules changed on the way (-want +got):\n%s", diff)
		}
		reqs := rapid.SliceOf(rapid.Custom(func(t *rapid.T) descriptor.Request {
			return descriptor.Request{Action: s.Draw(t, "action"), Resources: rapid.SliceOfN(s, 1, 3).Draw(t, "resources"),
				Save: rapid.SliceOfN(s, 0, 2).Draw(t, "save"), Ask: rapid.Bool().Draw(t, "ask")}
		})).Draw(t, "requests")
		got := Requests(EventRequests(reqs))
		if len(reqs) == 0 {
			if got != nil {
				t.Fatalf("no requests came back as %v, want nil", got)
			}
			return
		}
		if diff := cmp.Diff(reqs, got); diff != "" {
			t.Fatalf("requests changed on the way (-want +got):\n%s", diff)
		}
	})
}
