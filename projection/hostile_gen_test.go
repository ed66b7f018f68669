package projection

import (
	"fmt"

	"github.com/stepgate/stepgate/events"
	"pgregory.net/rapid"
)

// The streams the hostile-message property draws: good histories, and
// messages no engine writes among them.

// goodHistory is a consistent history of run: a start, steps of one or two
// calls in one or two commits, maybe an end.
func goodHistory(t *rapid.T, run string) []*events.Commit {
	mkc := func(id string, n int, kind events.Kind, evs ...events.Event) *events.Commit {
		return &events.Commit{ID: run + "-" + id, Run: run, Step: n, Kind: kind, At: hostileAt, Host: "h", Events: evs}
	}
	cs := []*events.Commit{mkc("s", 0, events.KindStart, events.RunStarted{Agent: "build", Project: "p"})}
	for n := 1; n <= rapid.IntRange(0, 4).Draw(t, "steps"); n++ {
		var decide, settle []events.Event
		for i := range rapid.IntRange(1, 2).Draw(t, "calls") {
			id := fmt.Sprint("c", i)
			decide = append(decide, events.ToolCallRequested{CallID: id, Tool: "echo"},
				events.PermissionDecided{CallID: id, Verdict: events.VerdictAllow}, events.ToolCallStarted{CallID: id, Attempt: 1})
			settle = append(settle, events.ToolResultRecorded{CallID: id})
		}
		settle = append(settle, events.StepFinalized{Calls: len(decide) / 3})
		if rapid.Bool().Draw(t, "one commit") {
			cs = append(cs, mkc(fmt.Sprint("x", n), n, events.KindStep, append(decide, settle...)...))
		} else {
			cs = append(cs, mkc(fmt.Sprint("d", n), n, events.KindDecide, decide...),
				mkc(fmt.Sprint("t", n), n, events.KindSettle, settle...))
		}
	}
	if rapid.Bool().Draw(t, "end") {
		cs = append(cs, mkc("e", 0, events.KindEnd, events.RunEnded{Cause: events.CauseCompleted}))
	}
	return cs
}

// hostile draws one message no engine writes, aimed at victim (a run with
// published commits sent so far) while other is another run.
func hostile(t *rapid.T, victim, other string, sent []*events.Commit) message {
	last := sent[len(sent)-1]
	on := events.RunSubject(victim)
	wrong := func(c events.Commit) message { return message{subject: on, data: encode(t, &c)} }
	switch rapid.IntRange(0, 15).Draw(t, "kind") {
	case 0: // any bytes at all, on any subject of the log
		subject := rapid.SampledFrom([]string{on, events.RegistrySubject("s"), events.OutputSubject, events.GrantSubject("p"), "sg.other"}).Draw(t, "subject")
		return message{subject: subject, data: rapid.SliceOfN(rapid.Byte(), 0, 64).Draw(t, "bytes")}
	case 1: // JSON of another shape
		return message{subject: on, data: []byte(rapid.SampledFrom([]string{`[]`, `null`, `{}`, `"x"`, `{"id":1}`, `{"events":{}}`}).Draw(t, "shape"))}
	case 2: // a payload of the wrong type
		return message{subject: on, data: fmt.Appendf(nil, `{"id":"w","run":%q,"step":1,"kind":"step","at":"2026-12-01T00:00:00Z","events":[{"type":"ToolCallRequested","v":1,"data":{"call_id":5}}]}`, victim)}
	case 3: // another run's commit on the victim's subject
		c := *last
		c.Run, c.ID = other, "foreign"
		return wrong(c)
	case 4: // a step far ahead
		c := *last
		c.ID, c.Step, c.Kind = "ahead", rapid.IntRange(10, 1<<30).Draw(t, "ahead"), events.KindStep
		c.Events = []events.Event{events.ToolCallRequested{CallID: "z", Tool: "echo"}}
		return wrong(c)
	case 5: // the start again
		c := *sent[0]
		c.ID = "restart"
		return wrong(c)
	case 6: // an end of the victim, on a subject that is not its own
		c := events.Commit{ID: "end", Run: victim, Kind: events.KindEnd, At: hostileAt, Events: []events.Event{events.RunEnded{Cause: events.CauseFailed}}}
		subject := rapid.SampledFrom([]string{events.RunSubject(other), events.RegistrySubject("s"), events.OutputSubject, events.GrantSubject("p")}).Draw(t, "foreign")
		return message{subject: subject, data: encode(t, &c)}
	case 7: // a commit sent again with its id
		return wrong(*rapid.SampledFrom(sent).Draw(t, "again"))
	case 8: // a kind nobody knows
		c := *last
		c.ID, c.Kind = "kind", events.Kind(rapid.StringMatching(`[a-z]{1,8}`).Filter(func(k string) bool { return !runKinds[events.Kind(k)] }).Draw(t, "k"))
		return wrong(c)
	case 9: // a negative step
		c := *last
		c.ID, c.Step = "neg", -rapid.IntRange(1, 1<<40).Draw(t, "neg")
		return wrong(c)
	case 10: // no events
		c := *last
		c.ID, c.Events = "empty", nil
		return message{subject: on, data: fmt.Appendf(nil, `{"id":"empty","run":%q,"kind":"step","at":"2026-12-01T00:00:00Z","events":[]}`, victim)}
	case 11: // a result for a call never requested
		c := *last
		c.ID, c.Kind, c.Events = "nocall", events.KindSettle, []events.Event{events.ToolResultRecorded{CallID: "nobody"}}
		return wrong(c)
	case 12: // a registry commit on another scope's subject
		c := events.Commit{ID: "reg", Kind: events.KindRegistry, At: hostileAt,
			Events: []events.Event{events.ToolRegistered{Scope: "a", Name: "echo", Identity: "i"}}}
		return message{subject: events.RegistrySubject("b"), data: encode(t, &c)}
	case 14: // the next step begun, then an event that cannot apply: all or nothing
		next := 0
		for _, c := range sent {
			next = max(next, c.Step)
		}
		c := events.Commit{ID: "half", Run: victim, Step: next + 1, Kind: events.KindStep, At: hostileAt, Host: "intruder",
			Events: []events.Event{events.ToolCallRequested{CallID: "h", Tool: "echo"},
				events.PermissionDecided{CallID: "h", Verdict: events.VerdictAllow}, events.ToolResultRecorded{CallID: "nobody"}}}
		return wrong(c)
	case 15: // issue 22: only an event this build cannot read, for a step near or far
		return farStep(t, victim, sent)
	default: // an approval for another project, inside the victim's run
		c := *last
		c.ID, c.Kind, c.Events = "grant", events.KindResolve, []events.Event{events.ApprovalSaved{ID: "g", Project: "elsewhere", Action: "bash", Resource: "*"}}
		return wrong(c)
	}
}

// hostileStream interleaves the good histories of three runs with hostile
// messages aimed at the first two; the third is never touched.
func hostileStream(t *rapid.T) (runs []string, msgs []message) {
	runs = []string{"01VICTIMA", "01VICTIMB", "01UNTOUCHED"}
	hist := map[string][]*events.Commit{}
	for _, r := range runs {
		hist[r] = goodHistory(t, r)
	}
	sent := map[string]int{}
	for {
		var live []string
		for _, r := range runs {
			if sent[r] < len(hist[r]) {
				live = append(live, r)
			}
		}
		if len(live) == 0 {
			return runs, msgs
		}
		victim := rapid.SampledFrom(runs[:2]).Draw(t, "victim")
		if sent[victim] > 0 && rapid.IntRange(0, 2).Draw(t, "hostile?") == 0 {
			msgs = append(msgs, hostile(t, victim, runs[1-indexOf(runs, victim)], hist[victim][:sent[victim]]))
			continue
		}
		r := rapid.SampledFrom(live).Draw(t, "run")
		c := hist[r][sent[r]]
		sent[r]++
		msgs = append(msgs, message{subject: events.RunSubject(r), data: encode(t, c), good: true})
	}
}

func indexOf(ss []string, s string) int {
	for i, x := range ss {
		if x == s {
			return i
		}
	}
	return -1
}
