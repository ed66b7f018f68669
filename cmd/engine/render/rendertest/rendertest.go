// Package rendertest holds show documents for the tests of what renders
// them (package render's and the report's tests in a browser): a run with
// a hostile string in every field, and a long run.
package rendertest

import (
	"encoding/json"
	"fmt"
	"time"

	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/cmd/engine/render"
	"github.com/stepgate/stepgate/events"
)

// Hostile is a one-step, one-call run with s in every string a model or
// a person can put in the log (its arguments, result, tool name, reason,
// ticket message, the host that ran it, its sandbox's profile and
// connections).
func Hostile(s string) *render.Show {
	args, _ := json.Marshal(map[string]string{"cmd": s})
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	end := now.Add(time.Second)
	waited := int64(500)
	profile := &events.SandboxProfile{Mode: s, Network: s, Allow: []string{s}, Writable: []string{s}, Denied: []string{s}, ReadOnly: []string{s}}
	r := &sgclient.Run{ID: "run-" + s, Status: "ended", Snapshot: events.RunStarted{Agent: s, Project: s, Sandbox: profile}}
	r.Steps = []sgclient.Step{{N: 1, Final: true, Calls: []sgclient.Call{{ID: "c1", Tool: s,
		Result: &events.ToolResultRecorded{Parts: []events.Part{{Type: "text", Text: s}}}}}}}
	return &render.Show{Run: r, Timeline: render.TimelineView{Timed: true, Started: &now, Ended: &end, Steps: []render.StepView{{N: 1, Final: true, Host: s, Calls: []render.CallView{{
		ID: s, Tool: s, Args: args, Verdict: s, Reason: s, Source: s,
		Rule:   &events.Rule{Action: s, Resource: s, Effect: s},
		Ticket: &render.TicketView{ID: s, Kind: s, Reply: s, Principal: s, By: s, Message: s, WaitedMS: &waited},
		Grant:  &render.GrantView{ID: s, Principal: s, Found: true},
		Result: &render.ResultView{Preview: s, Files: []render.FileView{{Path: s, Bytes: -1}}},
		State:  []string{s},
		RanOn:  s,
		Sandbox: &events.SandboxRecord{Mode: s, Network: s, Namespaces: []string{s}, Profile: profile,
			Connections: []events.NetConnection{{Form: s, Authority: s, IP: s, Verdict: s, Code: s, Reason: s}}},
		RequestedAt: &now, ResultAt: &end,
	}}}}}}
}

// Big is a timed run of n steps of two calls each (allowed, blocked or
// confirmed, a ticket every seventh step), a second apart.
func Big(n int) *render.Show {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	r := &sgclient.Run{ID: "01M8P570G07KPDFAMNYVAD1BIG", Status: "ended", Snapshot: events.RunStarted{Agent: "build", Project: "p1"}}
	tl := render.TimelineView{Timed: true, Started: &t0}
	verdicts := []string{events.VerdictAllow, events.VerdictAllow, events.VerdictBlock, events.VerdictConfirm}
	for i := range n {
		at := t0.Add(time.Duration(i) * time.Second)
		sv := render.StepView{N: i + 1, Final: true, At: &at}
		rs := sgclient.Step{N: i + 1, Final: true}
		for j := range 2 {
			req, res := at.Add(time.Duration(j)*100*time.Millisecond), at.Add(time.Duration(j)*100*time.Millisecond+300*time.Millisecond)
			ms := res.Sub(req).Milliseconds()
			text := fmt.Sprintf("line %d of step %d\n", j, i+1)
			c := render.CallView{ID: fmt.Sprintf("c%d", j+1), Tool: "bash", Args: json.RawMessage(fmt.Sprintf(`{"command":"echo %d"}`, i)),
				Verdict: verdicts[(i+j)%len(verdicts)], Rule: &events.Rule{Action: "bash", Resource: "*", Effect: "allow"}, Source: "project config",
				Result: &render.ResultView{Preview: render.OneLine(text, 100), Bytes: len(text)}, RequestedAt: &req, ResultAt: &res, DurationMS: &ms}
			if c.Verdict == events.VerdictConfirm && i%7 == 0 {
				issued, resolved, waited := req, req.Add(200*time.Millisecond), int64(200)
				c.Ticket = &render.TicketView{ID: fmt.Sprintf("t%d", i), Kind: "permission", Reply: events.ReplyOnce, Approved: true, Principal: "alice",
					IssuedAt: &issued, ResolvedAt: &resolved, WaitedMS: &waited}
			}
			sv.Calls = append(sv.Calls, c)
			rs.Calls = append(rs.Calls, sgclient.Call{ID: c.ID, Tool: c.Tool, Result: &events.ToolResultRecorded{Parts: []events.Part{{Type: "text", Text: text}}}})
		}
		tl.Steps = append(tl.Steps, sv)
		r.Steps = append(r.Steps, rs)
	}
	end := t0.Add(time.Duration(n) * time.Second)
	tl.Ended = &end
	return &render.Show{Run: r, Timeline: tl}
}
