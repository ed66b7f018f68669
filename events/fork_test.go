package events_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/events"
)

// A fork's start and its copied steps round-trip; a RunStarted stored
// before forks existed reads as a run that is not a fork.
func TestForkEventsRoundTrip(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	want := &events.Commit{ID: "01JDZ0000000000000000000AB", Run: "01JDZ0000000000000000000RF", Step: 1,
		Kind: events.KindStep, At: at, Events: []events.Event{
			events.RunStarted{Agent: "build", Location: "/w", Project: "p", Narrowing: "configured",
				ForkedFrom: &events.ForkedFrom{Run: "01JDZ0000000000000000000RR", Step: 2, Commit: "01JDZ0000000000000000000AA"}},
			events.StepCopied{Run: "01JDZ0000000000000000000RR", Step: 1, Commits: []string{"01JDZ0000000000000000000A1", "01JDZ0000000000000000000A2"}},
			events.StepFinalized{Calls: 0},
		}}
	b, err := events.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := events.Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if v := events.Version(events.TypeStepCopied); v != 1 {
		t.Errorf("StepCopied version %d, want 1", v)
	}

	old := []byte(`{"id":"01JDZ0000000000000000000AC","run":"01JDZ0000000000000000000RR","kind":"start","at":"2026-11-30T12:00:00Z","events":[{"type":"RunStarted","v":1,"data":{"agent":"build","location":"/w","project":"p","rules":[],"narrowing":"configured","limits":{"max_lines":1,"max_bytes":1},"policy_sha256":"d","engine_version":"dev"}}]}`)
	c, err := events.Unmarshal(old)
	if err != nil {
		t.Fatal(err)
	}
	if rs, ok := c.Events[0].(events.RunStarted); !ok || rs.ForkedFrom != nil {
		t.Errorf("an older RunStarted decodes as %#v, want a RunStarted without forked_from", c.Events[0])
	}
}
