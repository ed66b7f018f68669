package projection_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection"
	"pgregory.net/rapid"
)

// genHistory draws a consistent run history: a start, then steps of one to
// three calls, each step either one commit or a decide and a settle commit,
// possibly an unknown event, possibly an end; each commit made by one of
// two hosts.
func genHistory(t *rapid.T) []*events.Commit {
	cs := genSteps(t)
	for _, c := range cs {
		c.Host = rapid.SampledFrom([]string{"h1", "h2"}).Draw(t, "host")
	}
	return link(cs)
}

func genSteps(t *rapid.T) []*events.Commit {
	cs := []*events.Commit{mk("s", 0, events.KindStart, events.RunStarted{Agent: "build"})}
	steps := rapid.IntRange(0, 8).Draw(t, "steps")
	for n := 1; n <= steps; n++ {
		calls := rapid.IntRange(1, 3).Draw(t, "calls")
		var decide, settle []events.Event
		for i := range calls {
			id := fmt.Sprintf("c%d", i)
			verdict := rapid.SampledFrom([]string{events.VerdictAllow, events.VerdictBlock}).Draw(t, "verdict")
			decide = append(decide, events.ToolCallRequested{CallID: id, Tool: "echo"},
				events.PermissionDecided{CallID: id, Verdict: verdict})
			if verdict == events.VerdictAllow && rapid.Bool().Draw(t, "fx") {
				decide = append(decide, events.ToolCallStarted{CallID: id, Attempt: 1})
			}
			settle = append(settle, events.ToolResultRecorded{CallID: id, IsError: verdict != events.VerdictAllow})
		}
		settle = append(settle, events.StepFinalized{Calls: calls})
		if rapid.Bool().Draw(t, "unknown") {
			settle = append(settle, events.Unknown{Type: "Future", V: 2})
		}
		if rapid.Bool().Draw(t, "one commit") {
			cs = append(cs, mk(fmt.Sprint("x", n), n, events.KindStep, append(decide, settle...)...))
		} else {
			cs = append(cs, mk(fmt.Sprint("d", n), n, events.KindDecide, decide...),
				mk(fmt.Sprint("s", n), n, events.KindSettle, settle...))
		}
	}
	if rapid.Bool().Draw(t, "end") {
		cs = append(cs, mk("e", 0, events.KindEnd, events.RunEnded{Cause: events.CauseCompleted}))
	}
	return cs
}

// link chains cs: each commit after the first names the one before it.
func link(cs []*events.Commit) []*events.Commit {
	for i := 1; i < len(cs); i++ {
		cs[i].Prev = cs[i-1].ID
	}
	return cs
}

// A checkpoint taken anywhere, written in its stored form and read back, and
// then the tail — with any commits delivered again — folds to the same run as
// the whole history at once.
func TestFoldCheckpointAnywhereProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := genHistory(t)
		whole := &projection.Run{}
		for i, c := range h {
			if err := whole.Apply(uint64(i+1), c); err != nil {
				t.Fatalf("apply: %v", err)
			}
		}
		cut := rapid.IntRange(0, len(h)).Draw(t, "cut")
		r := &projection.Run{}
		for i, c := range h[:cut] {
			if err := r.Apply(uint64(i+1), c); err != nil {
				t.Fatal(err)
			}
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		restored := &projection.Run{}
		if err := json.Unmarshal(b, restored); err != nil {
			t.Fatal(err)
		}
		redeliver := rapid.IntRange(0, cut).Draw(t, "redeliver")
		for i := redeliver; i < len(h); i++ {
			if err := restored.Apply(uint64(i+1), h[i]); err != nil {
				t.Fatal(err)
			}
		}
		wb, _ := json.Marshal(whole)
		wantRun := &projection.Run{}
		_ = json.Unmarshal(wb, wantRun)
		if diff := cmp.Diff(wantRun, restored); diff != "" {
			t.Fatalf("checkpoint at %d, redelivered from %d (-whole +restored):\n%s", cut, redeliver, diff)
		}
	})
}

// Every allowed call of a history ran on the host of the commit that
// recorded its result (a one-commit step's, or the settle commit after its
// decide commit, whoever decided it); no blocked call ran anywhere.
func TestFoldRanOnProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := genHistory(t)
		want := map[string]string{} // step/call: where it ran
		allowed := map[string]bool{}
		for _, c := range h {
			for _, e := range c.Events {
				key := func(call string) string { return fmt.Sprint(c.Step, "/", call) }
				switch e := e.(type) {
				case events.PermissionDecided:
					allowed[key(e.CallID)] = e.Verdict == events.VerdictAllow
				case events.ToolResultRecorded:
					if allowed[key(e.CallID)] {
						want[key(e.CallID)] = c.Host
					}
				}
			}
		}
		r := &projection.Run{}
		for i, c := range h {
			if err := r.Apply(uint64(i+1), c); err != nil {
				t.Fatalf("apply: %v", err)
			}
		}
		got := map[string]string{}
		for _, s := range r.Steps {
			for _, c := range s.Calls {
				if c.RanOn != "" {
					got[fmt.Sprint(s.N, "/", c.ID)] = c.RanOn
				}
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("where calls ran (-want +got):\n%s", diff)
		}
	})
}
