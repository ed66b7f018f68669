package commands

import (
	"slices"
	"strings"
	"testing"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/gate"
	"pgregory.net/rapid"
)

// Small alphabets, so that drawn requests meet.
var (
	editActions   = []string{"edit", "bash"}
	editResources = []string{"a.txt", "b.txt", "src/a.go", ".git/config", "git push", "git *", "*"}
	editPatterns  = []string{"*", "src/*", "git *", "a.txt"}
)

func drawRequest(t *rapid.T, label string) descriptor.Request {
	return descriptor.Request{
		Action:    rapid.SampledFrom(editActions).Draw(t, label+"action"),
		Resources: rapid.SliceOfN(rapid.SampledFrom(editResources), 0, 3).Draw(t, label+"resources"),
		Save:      rapid.SliceOfN(rapid.SampledFrom(editPatterns), 0, 2).Draw(t, label+"save"),
		Ask:       rapid.Bool().Draw(t, label+"ask"),
	}
}

// checkCovered asserts what covered promises: an edit's request is
// approved only by what the reply would have approved of the ticket — with
// once, resources the ticket named under the same action and protection;
// with always, also resources its save patterns allow (never a protected
// one), and then no save pattern the ticket would not have saved.
func checkCovered(t interface{ Fatalf(string, ...any) }, req descriptor.Request, asked []events.Request, always bool) {
	if !covered(req, asked, always) {
		return
	}
	for _, res := range req.Resources {
		ok := false
		for _, o := range asked {
			if o.Action != req.Action || o.Ask != req.Ask || o.Root != req.Root {
				continue
			}
			if slices.Contains(o.Resources, res) {
				ok = true
			}
			if always && !req.Ask {
				rs := gate.Ruleset{}
				for _, p := range o.Save {
					rs = append(rs, gate.Rule{Action: o.Action, Resource: p, Effect: gate.Allow, Source: gate.SourceSaved})
				}
				if gate.EvaluateInput(descriptor.Request{Action: req.Action, Resources: []string{res}}, nil, rs).Effect == gate.Allow {
					ok = true
				}
			}
		}
		if !ok {
			t.Fatalf("covered(%+v, %+v, always=%v): resource %q is not one the reply approves", req, asked, always, res)
		}
	}
	if always && len(req.Resources) > 0 {
		for _, p := range req.Save {
			if !slices.ContainsFunc(asked, func(o events.Request) bool { return o.Action == req.Action && slices.Contains(o.Save, p) }) {
				t.Fatalf("covered(%+v, %+v, always): saves %q, which the ticket would not have", req, asked, p)
			}
		}
	}
}

func TestCoveredNeverApprovesMore(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		req := drawRequest(t, "edit.")
		var asked []events.Request
		for i := range rapid.IntRange(0, 3).Draw(t, "asked") {
			o := drawRequest(t, "ticket"+strings.Repeat(".", i+1))
			asked = append(asked, events.Request{Action: o.Action, Resources: o.Resources, Save: o.Save, Ask: o.Ask})
		}
		always := rapid.Bool().Draw(t, "always")
		checkCovered(t, req, asked, always)
		// The ticket's own requests are covered by it, with once.
		for _, o := range asked {
			if !covered(descriptor.Request{Action: o.Action, Resources: o.Resources, Save: o.Save, Ask: o.Ask}, asked, false) {
				t.Fatalf("the ticket's own request %+v is not covered by it", o)
			}
		}
	})
}

// FuzzCovered checks covered's promise on requests the fuzzer writes: a
// resource and a save pattern each, for the edit and the ticket.
func FuzzCovered(f *testing.F) {
	f.Add("edit", "a.txt", "*", "edit", "a.txt", "*", false, false, false)
	f.Add("edit", "b.txt", "*", "edit", "a.txt", "*", true, false, false)
	f.Add("edit", ".git/config", "", "edit", "a.txt", "*", true, true, false)
	f.Add("bash", "git push origin", "git push *", "bash", "git push", "git *", true, false, false)
	f.Fuzz(func(t *testing.T, action, res, save, tAction, tRes, tSave string, always, ask, tAsk bool) {
		req := descriptor.Request{Action: action, Resources: []string{res}, Save: []string{save}, Ask: ask}
		asked := []events.Request{{Action: tAction, Resources: []string{tRes}, Save: []string{tSave}, Ask: tAsk}}
		checkCovered(t, req, asked, always)
	})
}
