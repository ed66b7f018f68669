package render

import (
	"encoding/json"
	"time"

	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor/builtin"
	"github.com/stepgate/stepgate/gate"
)

// BuildShow puts together what show tells of r: grants are the project's
// saved approvals (the ones a saved rule names), facts what the run's log
// adds (nil when it was not read).
func BuildShow(r *sgclient.Run, grants []sgclient.Grant, facts *Facts) *Show {
	d := &Show{Run: r, Timeline: TimelineView{Timed: facts != nil, Steps: []StepView{}}}
	if facts != nil {
		d.Timeline.Started, d.Timeline.Ended = facts.first, facts.last
	}
	for _, s := range r.Steps {
		sv := StepView{N: s.N, Final: s.Final, Host: s.Host, Calls: []CallView{}}
		if facts != nil {
			sv.At = facts.stepAt[s.N]
		}
		for _, c := range s.Calls {
			sv.Calls = append(sv.Calls, buildCall(r, s.N, c, grants, facts))
		}
		d.Timeline.Steps = append(d.Timeline.Steps, sv)
	}
	if raw, ok := r.State[builtin.TodoStateKey]; ok {
		tv := &TodosView{}
		if err := json.Unmarshal(raw, &tv.Items); err != nil {
			tv.Items, tv.Error = nil, err.Error()
		}
		d.Timeline.Todos = tv
	}
	return d
}

func buildCall(r *sgclient.Run, step int, c sgclient.Call, grants []sgclient.Grant, facts *Facts) CallView {
	v := CallView{ID: c.ID, Tool: c.Tool, Args: c.Args, Attempts: c.Attempts, RanOn: c.RanOn}
	if d := c.Decision; d != nil {
		v.Verdict, v.Reason, v.Rule = d.Verdict, d.Reason, d.Rule
		if d.Rule != nil {
			v.Source = gate.Source(d.Rule.Source).Label()
			if gate.Source(d.Rule.Source) == gate.SourceSaved {
				v.Grant = findGrant(r.Snapshot.Project, d.Rule, grants)
			}
		}
	}
	if c.Ticket != "" {
		if t := r.Ticket(c.Ticket); t != nil {
			v.Ticket = buildTicket(t, facts)
		}
	}
	if res := c.Result; res != nil {
		v.Result = buildResult(res, facts)
		v.Sandbox = res.Sandbox
	}
	if facts != nil {
		k := callKey{step, c.ID}
		v.State = facts.state[k]
		if at, ok := facts.requested[k]; ok {
			v.RequestedAt = &at
		}
		if at, ok := facts.result[k]; ok {
			v.ResultAt = &at
			if v.RequestedAt != nil {
				v.DurationMS = millis(at.Sub(*v.RequestedAt))
			}
		}
	}
	return v
}

// findGrant is the project's grant a saved rule came from: grants are
// de-duplicated on (project, action, resource), so that names one; a live
// grant is preferred to a revoked one.
func findGrant(project string, rule *events.Rule, grants []sgclient.Grant) *GrantView {
	var found *sgclient.Grant
	for i := range grants {
		g := &grants[i]
		if g.Project != project || g.Action != rule.Action || g.Resource != rule.Resource {
			continue
		}
		if found == nil || found.Revoked != nil && g.Revoked == nil {
			found = g
		}
	}
	if found == nil {
		return &GrantView{Action: rule.Action, Resource: rule.Resource}
	}
	return &GrantView{ID: found.ID, Action: found.Action, Resource: found.Resource, Principal: found.Principal,
		Ticket: found.Ticket, SavedAt: idTime(found.ID), Revoked: found.Revoked != nil, Found: true}
}

func buildTicket(t *sgclient.Ticket, facts *Facts) *TicketView {
	v := &TicketView{ID: t.ID, Kind: t.Kind, IssuedAt: idTime(t.ID)}
	if facts != nil {
		if at, ok := facts.issued[t.ID]; ok {
			v.IssuedAt = &at
		}
	}
	if res := t.Resolution; res != nil {
		v.Reply, v.Approved, v.Principal, v.By, v.Message = res.Reply, res.Approved, res.Principal, res.By, res.Message
		if res.Edit != nil {
			v.OriginalArgs, v.EditedArgs = res.Edit.Original, res.Edit.Args
		}
		if facts != nil {
			if at, ok := facts.resolved[t.ID]; ok {
				v.ResolvedAt = &at
				if v.IssuedAt != nil {
					v.WaitedMS = millis(at.Sub(*v.IssuedAt))
				}
			}
		}
	}
	return v
}

func buildResult(res *events.ToolResultRecorded, facts *Facts) *ResultView {
	v := &ResultView{IsError: res.IsError}
	var text string
	for _, p := range res.Parts {
		v.Bytes += len(p.Text) + len(p.Data)
		if p.Type == "text" {
			if text != "" {
				text += "\n"
			}
			text += p.Text
		}
	}
	v.Preview = OneLine(text, 100)
	for _, f := range res.Files {
		fv := FileView{Path: f, Bytes: -1}
		if facts != nil {
			if n, ok := facts.files[f]; ok {
				fv.Bytes = n
			}
		}
		v.Files = append(v.Files, fv)
	}
	return v
}

func millis(d time.Duration) *int64 {
	ms := d.Milliseconds()
	return &ms
}
