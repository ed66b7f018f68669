package commands

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/internal/vocab"
	"github.com/stepgate/stepgate/projection"
)

// maxEditNote is the most bytes of edited arguments the model's result
// repeats; longer ones are named by their size.
const maxEditNote = 2048

// EditedNote is the first part of the result of a call approved with
// edited arguments: the model reads that its arguments were not the ones
// that ran, and which ran (args, when short enough to repeat).
func EditedNote(args json.RawMessage) string {
	const head = "The user changed the arguments of this call before approving it; it ran with these arguments instead of yours"
	var b bytes.Buffer
	if json.Compact(&b, args) != nil || b.Len() > maxEditNote {
		return head + " (" + strconv.Itoa(len(args)) + " bytes, too long to repeat here)."
	}
	return head + ": " + b.String()
}

// editRefused is the error of a refused edit: nothing is committed and the
// ticket still waits.
func editRefused(ticket, why string) error {
	return fmt.Errorf("ticket %s: edited arguments refused: %s: %w", ticket, why, ErrEditRefused)
}

// checkEdit decides an approval's edited arguments for ticket t, whose
// call is in step s of run r, before anything is committed. The edited call
// is prepared as a new call would be (the tool's schema, its requests, its
// paths resolved now), then decided again: refused when the run's pinned
// rules or the configuration's current rules deny a request, or when a
// request asks that the ticket did not ask for and the reply does not
// approve (see covered). It returns the edit to record and the edited
// call's requests that asked: what an "always" saves.
func (h *replier) checkEdit(reg map[string]effectiveTool, cfg *runConfig, r *projection.RunHeader, s *projection.Step, t *projection.Ticket,
	req ReplyRequest, current gate.Ruleset) (*events.ArgsEdit, []descriptor.Request, error) {
	c := s.Call(t.CallID)
	if c == nil {
		return nil, nil, fmt.Errorf("ticket %s: call %s is not in step %d", t.ID, t.CallID, s.N)
	}
	tool, why := resolveTool(reg, c.Tool, c.Identity)
	if tool == nil {
		return nil, nil, fmt.Errorf("ticket %s: %s: %w", t.ID, why, ErrTicketStale)
	}
	call := executor.Call{Run: r.ID, Agent: cfg.agent, Step: s.N, CallID: c.ID, Location: cfg.location}
	prepared, err := tool.Prepare(call, req.Args)
	if err != nil {
		return nil, nil, editRefused(t.ID, err.Error())
	}
	reqs := prepared.Requests()
	if v := gate.Resume(reqs, cfg.rules, current, nil); v.Kind == gate.KindBlock {
		return nil, nil, editRefused(t.ID, v.Reason)
	}
	v := gate.Decide(cfg.narrowing, reqs, cfg.rules, h.grants.saved(cfg.project))
	switch v.Kind {
	case gate.KindBlock:
		return nil, nil, editRefused(t.ID, v.Reason)
	case gate.KindConfirm:
		always := req.Reply == events.ReplyAlways
		for _, a := range v.Asked {
			if !covered(a, t.Requests, always) {
				return nil, nil, editRefused(t.ID, fmt.Sprintf("%s %q asks, and the ticket did not ask for it (%s)",
					a.Action, a.Resources, v.Reason))
			}
		}
	default:
		v.Asked = nil
	}
	edit := &events.ArgsEdit{Original: c.Args, Args: req.Args, ArgsSHA: argsDigest(req.Args),
		Requests: vocab.EventRequests(reqs), Observed: prepared.Observed()}
	for _, p := range prepared.Paths() {
		edit.Paths = append(edit.Paths, events.ResolvedPath{Path: p.Path, Real: p.Real})
	}
	// The resolve commit holds both argument sets: half a commit at most,
	// so the reply's other events fit beside them.
	if n, most := eventSize(events.TicketResolved{Ticket: t.ID, CallID: t.CallID, Principal: req.Principal, Edit: edit}), h.commitBudget()/2; n > most {
		return nil, nil, editRefused(t.ID, fmt.Sprintf("recorded with the model's arguments the edit takes %d bytes, more than the %d a reply may", n, most))
	}
	return edit, v.Asked, nil
}

// covered reports whether the approver's reply to a ticket that asked for
// asked approves req, a request of the edited call that asks: each of its
// resources is one the ticket asked for, under the same action (a
// protected path only by a protected request of the ticket); with always,
// a resource may instead be matched by a save pattern of the ticket's
// request, and then req saves no pattern the ticket would not have saved.
// An edit never makes a reply approve more than it would have.
func covered(req descriptor.Request, asked []events.Request, always bool) bool {
	for _, res := range req.Resources {
		if !slices.ContainsFunc(asked, func(o events.Request) bool { return coversOne(o, req, res, always) }) {
			return false
		}
	}
	return true
}

// coversOne reports whether the ticket's request o approves resource res
// of the edited call's request req.
func coversOne(o events.Request, req descriptor.Request, res string, always bool) bool {
	if o.Action != req.Action || o.Root != req.Root || o.Ask != req.Ask {
		return false
	}
	if slices.Contains(o.Resources, res) {
		return !always || subset(req.Save, o.Save)
	}
	if !always || req.Ask || !subset(req.Save, o.Save) {
		return false
	}
	saves := make(gate.Ruleset, len(o.Save))
	for i, pat := range o.Save {
		saves[i] = gate.Rule{Action: o.Action, Resource: pat, Effect: gate.Allow, Source: gate.SourceSaved}
	}
	one := descriptor.Request{Action: req.Action, Resources: []string{res}, Root: req.Root}
	return gate.EvaluateInput(one, nil, saves).Effect == gate.Allow
}

// subset reports whether every element of a is in b.
func subset(a, b []string) bool {
	for _, s := range a {
		if !slices.Contains(b, s) {
			return false
		}
	}
	return true
}
