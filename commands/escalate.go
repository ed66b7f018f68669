package commands

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/sandbox"
	"github.com/stepgate/stepgate/internal/vocab"
	"github.com/stepgate/stepgate/projection"
)

// Escalation (docs/guide/sandbox.md, "When the sandbox refuses"): a call
// the sandbox refused something finishes with its result and one line
// saying what was refused; under a profile that says escalate: ask, a call
// that failed so instead waits on an escalation ticket, which says what was
// refused and holds the sandboxed attempt's result. Approving it runs the
// call again outside the sandbox (recorded as profile off, escalated by the
// ticket); rejecting it gives the model the attempt's result with the
// rejection. The call is started again (ToolCallStarted) before it runs
// outside, so a crash after that leaves it in doubt, and recovery settles
// it without running it (see escalatedCall): it never runs twice outside.

// escalateTo is what a call of a run whose sandbox escalates needs to ask:
// the fields of its ticket that come from the run.
type escalateTo struct {
	policy, project string
	ttl             time.Duration
}

// escalation is how run r's calls ask to run outside the sandbox on this
// host, c being its decision inputs: nil when its pinned profile does not
// escalate, when its calls run unsandboxed here, and when this host's own
// --sandbox floor sandboxes (no file escapes the operator's floor).
func (b *base) escalation(r *projection.RunHeader, c *runConfig) *escalateTo {
	s := r.Snapshot.Sandbox
	if s == nil || s.Escalate != config.EscalateAsk || c.contain == nil || b.cfg.Sandbox.Sandboxed() {
		return nil
	}
	return &escalateTo{policy: c.policy, project: c.project, ttl: c.ttl}
}

// sandboxRefused looks at call c, just run under at's sandbox (conns: what
// its proxy saw), for what the sandbox refused it. It records the refusal
// on the result's sandbox record and appends the line that says it to the
// model's result; then, if the run escalates and the call failed, the call
// waits on an escalation ticket instead of finishing.
func (h *submitter) sandboxRefused(c *planned, at placeAt, conns []events.NetConnection) {
	ref := refusalOf(c.refused, conns)
	if ref == nil {
		return
	}
	pol := at.contain
	if c.result.Sandbox == nil { // a file tool: it spawned nothing, its policy refused
		c.result.Sandbox = &events.SandboxRecord{Mode: string(pol.Mode), Network: string(policyNet(pol))}
	}
	c.result.Sandbox.Refused = ref
	c.result.Parts = append(c.result.Parts, events.Part{Type: executor.PartText, Text: refusalLine(ref, pol)})
	if at.escalate != nil && c.failed {
		h.escalate(c, at.escalate, ref)
	}
}

// refusalOf is what the sandbox refused a call: the tool's own refusal, or
// read from its output (r), else the first connection the proxy refused.
func refusalOf(r *executor.Refusal, conns []events.NetConnection) *events.SandboxRefusal {
	if r != nil {
		return &events.SandboxRefusal{Kind: r.Kind, Detail: r.Detail, Heuristic: r.Heuristic}
	}
	var first *events.NetConnection
	n := 0
	for i := range conns {
		if conns[i].Verdict == "refused" {
			if first == nil {
				first = &conns[i]
			}
			n++
		}
	}
	if first == nil {
		return nil
	}
	d := "the connection to " + first.Authority + " (" + first.Code
	if first.Reason != "" {
		d += ": " + first.Reason
	}
	d += ")"
	if n > 1 {
		d += " and " + strconv.Itoa(n-1) + " more"
	}
	return &events.SandboxRefusal{Kind: events.RefusedNetwork, Detail: d}
}

// policyNet is pol's network, off when it says none.
func policyNet(pol *sandbox.Policy) sandbox.Network {
	if pol.Network == "" {
		return sandbox.NetOff
	}
	return pol.Network
}

// refusalLine is the one line the model reads after the result of a call
// the sandbox refused: what, and what the sandbox allows.
func refusalLine(r *events.SandboxRefusal, pol *sandbox.Policy) string {
	var what string
	switch {
	case r.Kind == events.RefusedNetwork && !r.Heuristic:
		what = "the sandbox's proxy refused " + r.Detail
	case r.Kind == events.RefusedNetwork:
		what = "the command failed without a network; its output says " + strconv.Quote(r.Detail)
	case r.Heuristic:
		what = "the command failed and its output says a file operation was not permitted, likely by the sandbox: " + strconv.Quote(r.Detail)
	default:
		what = "the sandbox refused " + r.Detail
	}
	return "[sandbox: " + what + "; the call runs under " + profileWords(pol) + "]"
}

// profileWords says what a call under pol may do.
func profileWords(pol *sandbox.Policy) string {
	var b strings.Builder
	b.WriteString(string(pol.Mode))
	if pol.Mode == sandbox.ReadOnly {
		b.WriteString(" (it may write only its temporary directory")
	} else {
		b.WriteString(" (it may write only the location, the writable roots and its temporary directory")
	}
	switch policyNet(pol) {
	case sandbox.NetOff:
		b.WriteString("; no network)")
	case sandbox.NetProxy:
		b.WriteString("; the network only to " + strings.Join(pol.Allow, ", ") + ")")
	default:
		b.WriteString("; the host's network)")
	}
	return b.String()
}

// escalate makes call c, refused ref by the sandbox, wait on an escalation
// ticket instead of finishing: its result becomes the ticket's attempt.
func (h *submitter) escalate(c *planned, esc *escalateTo, ref *events.SandboxRefusal) {
	now := h.cfg.Clock()
	t := &events.TicketIssued{
		ID: h.cfg.IDs.New(now), CallID: c.req.ID, Tool: c.req.Tool, Identity: c.identity,
		ArgsSHA: argsDigest(c.req.Args), Requests: vocab.EventRequests(c.prepared.Requests()), Kind: events.TicketEscalation,
		PolicySHA: esc.policy, Project: esc.project,
		Escalation: &events.Escalation{Reason: escalationReason(ref), Refused: *ref, Attempt: attemptOf(c.result)},
	}
	if esc.ttl > 0 {
		d := now.Add(esc.ttl).UTC()
		t.Deadline = &d
	}
	c.escalation, c.terminal, c.state = t, false, nil // state is set with a result only
}

// escalationReason is an escalation ticket's reason.
func escalationReason(r *events.SandboxRefusal) string {
	what := r.Detail
	switch {
	case r.Kind == events.RefusedNetwork && !r.Heuristic:
		what = "its proxy refused " + r.Detail
	case r.Heuristic:
		what = "the command failed, its output saying " + strconv.Quote(r.Detail) + " (read from the output: it may have another cause)"
	}
	return "the sandbox refused the call: " + what + "; approving runs the call again outside the sandbox, with the host user's authority (the sandboxed attempt's result is on the ticket)"
}

// maxAttemptText bounds the text of the sandboxed attempt an escalation
// ticket holds (its end is kept: that is where a command says what
// failed); the attempt's whole output is in its output file when it had
// one.
const maxAttemptText = 16 << 10

// attemptOf is r as an escalation ticket holds it: its text parts, the
// last maxAttemptText bytes of them.
func attemptOf(r events.ToolResultRecorded) events.ToolResultRecorded {
	out := events.ToolResultRecorded{CallID: r.CallID, IsError: r.IsError, Files: r.Files, Sandbox: r.Sandbox}
	room := maxAttemptText
	var keep []events.Part
	for i := len(r.Parts) - 1; i >= 0 && room > 0; i-- {
		p := r.Parts[i]
		if p.Type != executor.PartText {
			continue
		}
		if len(p.Text) > room {
			p.Text = "[… the beginning of the attempt's output is left out]\n" + strings.ToValidUTF8(p.Text[len(p.Text)-room:], "")
		}
		room -= len(p.Text)
		keep = append(keep, p)
	}
	for i := len(keep) - 1; i >= 0; i-- {
		out.Parts = append(out.Parts, keep[i])
	}
	if len(r.Structured) <= room {
		out.Structured = r.Structured
	}
	return out
}

// EscalatedNote ends the result of a call an escalation ticket's approval
// ran outside the sandbox.
const EscalatedNote = "[sandbox: this call ran outside the sandbox, with the host user's authority: its escalation was approved]"

// runEscalated runs c, whose escalation ticket was approved, outside the
// sandbox, and records it so.
func (c *planned) runEscalated(ctx context.Context, store *executor.OutputStore, lim executor.Limits) {
	c.prepared.Contain(nil, nil)
	c.run(ctx, store, lim)
	c.result.Sandbox = &events.SandboxRecord{Mode: config.SandboxOff, Network: config.NetworkHost, Escalated: c.escalated}
	c.result.Parts = append(c.result.Parts, events.Part{Type: executor.PartText, Text: EscalatedNote})
}

// EscalationRejected is added to the sandboxed attempt's result when its
// escalation ticket is rejected; EscalationExpired when it expired.
const (
	EscalationRejected = "The user rejected running this call outside the sandbox"
	EscalationExpired  = "The escalation expired before an answer; the call did not run outside the sandbox."
)

// escalationResult is the model's result for escalation ticket t's call
// when it does not run outside the sandbox: the sandboxed attempt's
// result, then note.
func escalationResult(t *projection.Ticket, note string) events.ToolResultRecorded {
	if t.Escalation == nil {
		return resultEvent(t.CallID, note)
	}
	r := t.Escalation.Attempt
	r.CallID = t.CallID
	r.Parts = append(append([]events.Part(nil), r.Parts...), events.Part{Type: executor.PartText, Text: note})
	return r
}

// escalatedCall reports whether c's ticket is an approved escalation: a
// call that started outside the sandbox. Recovery never runs it again.
func escalatedCall(r *projection.RunHeader, c *projection.Call) bool {
	t := r.Ticket(c.Ticket)
	return t != nil && t.Kind == events.TicketEscalation && t.Resolution != nil && t.Resolution.Approved
}
