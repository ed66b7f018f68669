package main

import (
	"encoding/json"
	"time"

	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor/builtin"
	"github.com/stepgate/stepgate/gate"
)

// showDoc is what `engine show RUN` tells, in one place: the text timeline
// renders it and --json prints it. The run's own fields are the wire
// contract's, as the service's show endpoint answers (a reader of the run
// alone decodes the document as a client.Run); Timeline is what the verb
// adds to them from the project's grants and the run's log.
type showDoc struct {
	*sgclient.Run
	Timeline timelineDoc `json:"timeline"`
}

// timelineDoc is a run's steps and calls as a person reads them.
type timelineDoc struct {
	// Timed is true when the run's commits were read (the run_facts
	// endpoint answered), so the times, durations and spilled-file sizes
	// are known.
	Timed bool `json:"timed"`
	// Started and Ended are the times of the run's first and last commit.
	Started *time.Time `json:"started,omitempty"`
	Ended   *time.Time `json:"ended,omitempty"`
	Steps   []stepView `json:"steps"`
	Todos   *todosView `json:"todos,omitempty"`
}

// stepView is one step of the timeline.
type stepView struct {
	N     int        `json:"n"`
	Final bool       `json:"final"`
	Host  string     `json:"host,omitempty"`
	At    *time.Time `json:"at,omitempty"`
	Calls []callView `json:"calls"`
}

// callView is one call of a step: how it was decided, by what, and what
// became of it.
type callView struct {
	ID      string          `json:"id"`
	Tool    string          `json:"tool"`
	Args    json.RawMessage `json:"args,omitempty"`
	Verdict string          `json:"verdict,omitempty"`
	Reason  string          `json:"reason,omitempty"`
	// Rule is the deciding rule; Source is its layer as a person reads it
	// (gate.Source's label).
	Rule   *events.Rule `json:"rule,omitempty"`
	Source string       `json:"source,omitempty"`
	// Grant is the saved approval that allowed the call, when its rule's
	// source is saved.
	Grant    *grantView  `json:"grant,omitempty"`
	Ticket   *ticketView `json:"ticket,omitempty"`
	Attempts int         `json:"attempts,omitempty"`
	Result   *resultView `json:"result,omitempty"`
	// RanOn is the host that executed the call (see client.Call.RanOn);
	// empty when its result was recorded without it running.
	RanOn string `json:"ran_on,omitempty"`
	// Sandbox is what the sandbox enforced on the call's command, and its
	// connections (see events.SandboxRecord); nil when it ran none
	// sandboxed.
	Sandbox *events.SandboxRecord `json:"sandbox,omitempty"`
	// State lists the run-state keys the call set (todos).
	State []string `json:"state,omitempty"`
	// RequestedAt and ResultAt are the commit times of the call's request
	// and of its result; DurationMS is the time between them.
	RequestedAt *time.Time `json:"requested_at,omitempty"`
	ResultAt    *time.Time `json:"result_at,omitempty"`
	DurationMS  *int64     `json:"duration_ms,omitempty"`
}

// grantView names a saved approval: who saved it and when (from its id).
type grantView struct {
	ID        string     `json:"id"`
	Action    string     `json:"action"`
	Resource  string     `json:"resource"`
	Principal string     `json:"principal,omitempty"`
	Ticket    string     `json:"ticket,omitempty"`
	SavedAt   *time.Time `json:"saved_at,omitempty"`
	Revoked   bool       `json:"revoked,omitempty"`
	// Found is false when no grant of the project matches the rule (it was
	// withdrawn and the grants no longer list it).
	Found bool `json:"found"`
}

// ticketView is a confirmation and its answer: who, how, after how long.
type ticketView struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
	// Reply is once, always, reject, answer, auto, expired or stale; empty
	// while it is pending.
	Reply      string     `json:"reply,omitempty"`
	Approved   bool       `json:"approved"`
	Principal  string     `json:"principal,omitempty"`
	By         string     `json:"by,omitempty"`
	Message    string     `json:"message,omitempty"`
	IssuedAt   *time.Time `json:"issued_at,omitempty"`
	ResolvedAt *time.Time `json:"resolved_at,omitempty"`
	WaitedMS   *int64     `json:"waited_ms,omitempty"`
	// OriginalArgs and EditedArgs are set when the approver changed the
	// call's arguments: the model's, and the ones that ran.
	OriginalArgs json.RawMessage `json:"original_args,omitempty"`
	EditedArgs   json.RawMessage `json:"edited_args,omitempty"`
}

// resultView is a call's model-visible result: its size and the files that
// hold what the preview left out.
type resultView struct {
	IsError bool   `json:"is_error,omitempty"`
	Preview string `json:"preview"`
	// Bytes is the size of the model-visible content (text and data parts).
	Bytes int        `json:"bytes"`
	Files []fileView `json:"files,omitempty"`
}

// fileView is one spilled output file; Bytes is its size when the log was
// read (-1: unknown).
type fileView struct {
	Path  string `json:"path"`
	Bytes int64  `json:"bytes"`
}

// todosView is the run's todo list as it stands.
type todosView struct {
	Items builtin.TodoList `json:"items"`
	// Error is set when the recorded list does not decode.
	Error string `json:"error,omitempty"`
}

// buildShow puts together what show tells of r: grants are the project's
// saved approvals (the ones a saved rule names), facts what the run's log
// adds (nil when it was not read).
func buildShow(r *sgclient.Run, grants []sgclient.Grant, facts *logFacts) *showDoc {
	d := &showDoc{Run: r, Timeline: timelineDoc{Timed: facts != nil, Steps: []stepView{}}}
	if facts != nil {
		d.Timeline.Started, d.Timeline.Ended = facts.first, facts.last
	}
	for _, s := range r.Steps {
		sv := stepView{N: s.N, Final: s.Final, Host: s.Host, Calls: []callView{}}
		if facts != nil {
			sv.At = facts.stepAt[s.N]
		}
		for _, c := range s.Calls {
			sv.Calls = append(sv.Calls, buildCall(r, s.N, c, grants, facts))
		}
		d.Timeline.Steps = append(d.Timeline.Steps, sv)
	}
	if raw, ok := r.State[builtin.TodoStateKey]; ok {
		tv := &todosView{}
		if err := json.Unmarshal(raw, &tv.Items); err != nil {
			tv.Items, tv.Error = nil, err.Error()
		}
		d.Timeline.Todos = tv
	}
	return d
}

func buildCall(r *sgclient.Run, step int, c sgclient.Call, grants []sgclient.Grant, facts *logFacts) callView {
	v := callView{ID: c.ID, Tool: c.Tool, Args: c.Args, Attempts: c.Attempts, RanOn: c.RanOn}
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
func findGrant(project string, rule *events.Rule, grants []sgclient.Grant) *grantView {
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
		return &grantView{Action: rule.Action, Resource: rule.Resource}
	}
	return &grantView{ID: found.ID, Action: found.Action, Resource: found.Resource, Principal: found.Principal,
		Ticket: found.Ticket, SavedAt: idTime(found.ID), Revoked: found.Revoked != nil, Found: true}
}

func buildTicket(t *sgclient.Ticket, facts *logFacts) *ticketView {
	v := &ticketView{ID: t.ID, Kind: t.Kind, IssuedAt: idTime(t.ID)}
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

func buildResult(res *events.ToolResultRecorded, facts *logFacts) *resultView {
	v := &resultView{IsError: res.IsError}
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
	v.Preview = oneLine(text, 100)
	for _, f := range res.Files {
		fv := fileView{Path: f, Bytes: -1}
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
