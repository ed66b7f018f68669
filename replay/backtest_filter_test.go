package replay

import (
	"slices"
	"testing"
	"time"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/gate"
)

// The filters select calls by run, by project and by when they were
// decided; a run started before --since still has its pinned rules.
func TestBacktestFilters(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	allow := []events.Rule{{Action: "*", Resource: "*", Effect: "allow", Source: "default"}}
	call := func(id string) []events.Event {
		return []events.Event{events.ToolCallRequested{CallID: id, Tool: "bash"},
			events.PermissionDecided{CallID: id, Verdict: "allow", Reason: `allowed by rule * "*" (built-in default)`, Rule: &allow[0],
				Requests: []events.Request{{Action: "bash", Resources: []string{"rm x"}}}}}
	}
	commits := []*events.Commit{
		{ID: "1", Run: "A", Kind: events.KindStart, At: t0, Events: []events.Event{events.RunStarted{Agent: "build", Project: "p", Rules: allow, Narrowing: "configured"}}},
		{ID: "2", Run: "B", Kind: events.KindStart, At: t0, Events: []events.Event{events.RunStarted{Agent: "build", Project: "q", Rules: allow, Narrowing: "configured"}}},
		{ID: "3", Run: "A", Step: 1, Kind: events.KindStep, At: t0.Add(time.Hour), Events: call("a1")},
		{ID: "4", Run: "B", Step: 1, Kind: events.KindStep, At: t0.Add(time.Hour), Events: call("b1")},
		{ID: "5", Run: "A", Step: 2, Kind: events.KindStep, At: t0.Add(3 * time.Hour), Events: call("a2")},
		{ID: "6", Run: "A", Kind: events.KindEnd, At: t0.Add(3 * time.Hour), Events: []events.Event{events.RunEnded{Cause: events.CauseCompleted}}},
		{ID: "7", Run: "A", Step: 3, Kind: events.KindStep, At: t0.Add(4 * time.Hour), Events: call("late")}, // after its end: no pinned rules left
	}
	deny := func(events.RunStarted) gate.Ruleset {
		return gate.Ruleset{{Action: "*", Resource: "*", Effect: gate.Allow, Source: gate.SourceDefault}, {Action: "bash", Resource: "rm *", Effect: gate.Deny, Source: gate.SourceProject}}
	}
	for _, tc := range []struct {
		f    Filter
		want []string
	}{
		{Filter{}, []string{"a1", "b1", "a2"}},
		{Filter{Run: "A"}, []string{"a1", "a2"}},
		{Filter{Project: "q"}, []string{"b1"}},
		{Filter{Since: t0.Add(2 * time.Hour)}, []string{"a2"}},
		{Filter{Run: "B", Since: t0.Add(2 * time.Hour)}, nil},
	} {
		b := NewBacktest(deny, tc.f)
		var got []string
		for i, c := range commits {
			b.Apply(uint64(i+1), c, func(ch Change) { got = append(got, ch.CallID) })
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%+v: changed %v, want %v", tc.f, got, tc.want)
		}
	}
}
