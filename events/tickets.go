package events

import (
	"encoding/json"
	"time"
)

// Ticket kinds: a call waits for a human's permission, for answers, or
// for leave to run again outside the sandbox that refused it.
const (
	TicketPermission = "permission"
	TicketInput      = "input"
	TicketEscalation = "escalation"
)

// TicketIssued suspends one call until a human replies. It is committed in
// the same commit that makes the run Awaiting. The id is a ULID with 80
// random bits: unguessable and single-use.
type TicketIssued struct {
	ID       string    `json:"id"`
	CallID   string    `json:"call_id"`
	Tool     string    `json:"tool"`
	Identity string    `json:"identity"`
	ArgsSHA  string    `json:"args_sha256"`
	Requests []Request `json:"requests,omitempty"`
	Kind     string    `json:"kind"`
	// PolicySHA is the digest of the ruleset the verdict came from.
	PolicySHA string     `json:"policy_sha256"`
	Deadline  *time.Time `json:"deadline,omitempty"`
	// Project is the run's project: an "always" reply saves approvals there.
	Project string `json:"project"`
	// Trace is the W3C traceparent of the call's span when the engine
	// traces: the host that resolves the ticket continues that trace.
	Trace string `json:"trace,omitempty"`
	// Escalation is an escalation ticket's reason and the sandboxed
	// attempt's result; absent for other kinds.
	Escalation *Escalation `json:"escalation,omitempty"`
}

// StepAwaiting says the step has calls waiting on tickets: its results are
// not published until every call is terminal.
type StepAwaiting struct {
	Tickets []string `json:"tickets"`
}

// Replies a human can give, and how a ticket was resolved.
const (
	ReplyOnce   = "once"
	ReplyAlways = "always"
	ReplyReject = "reject"
	ReplyAnswer = "answer"

	// Outcomes besides a human's reply.
	ResolvedAuto    = "auto"    // approved by another ticket's "always"
	ResolvedCascade = "cascade" // rejected along with a related call
	ResolvedExpired = "expired" // the deadline passed
	ResolvedStale   = "stale"   // the tool's identity is no longer effective
)

// TicketResolved records the answer to a ticket: who replied, how, when.
type TicketResolved struct {
	Ticket    string          `json:"ticket"`
	CallID    string          `json:"call_id"`
	Reply     string          `json:"reply"`
	Approved  bool            `json:"approved"`
	Message   string          `json:"message,omitempty"`
	Answers   json.RawMessage `json:"answers,omitempty"`
	Principal string          `json:"principal,omitempty"`
	// By is the ticket whose reply resolved this one (auto, cascade).
	By string `json:"by,omitempty"`
	// Edit, on an approval, is the approver's change to the call's
	// arguments: the call runs (and runs again after a crash) with
	// Edit.Args, never with the model's. A resolution with an edit is
	// written at version 2 (see [Version]), so a build that predates edits
	// skips it rather than run the model's arguments.
	Edit *ArgsEdit `json:"edit,omitempty"`
}

// ArgsEdit records an approval with changed arguments: both argument sets,
// and what the edited call raised and saw when the approver's reply was
// decided (its paths are held to it when it runs, as a decision's are).
type ArgsEdit struct {
	// Original are the model's arguments; Args the approver's.
	Original json.RawMessage `json:"original"`
	Args     json.RawMessage `json:"args"`
	// ArgsSHA is the SHA-256 of Args' canonical JSON.
	ArgsSHA string `json:"args_sha256"`
	// Requests are the edited call's permission requests.
	Requests []Request `json:"requests,omitempty"`
	// Observed and Paths are what the edited call saw when the reply was
	// decided (see PermissionDecided).
	Observed string         `json:"observed,omitempty"`
	Paths    []ResolvedPath `json:"paths,omitempty"`
}

// ApprovalSaved is an "always" reply's grant: an allow rule for a project,
// applying to every run and agent of it. Grants are de-duplicated on
// (project, action, resource).
type ApprovalSaved struct {
	ID        string `json:"id"`
	Project   string `json:"project"`
	Action    string `json:"action"`
	Resource  string `json:"resource"`
	Principal string `json:"principal,omitempty"`
	Ticket    string `json:"ticket,omitempty"`
}

// GrantRevoked withdraws a saved approval.
type GrantRevoked struct {
	ID        string `json:"id"`
	Project   string `json:"project"`
	Principal string `json:"principal,omitempty"`
}

// EventType implements [Event].
func (TicketIssued) EventType() string { return TypeTicketIssued }

// EventType implements [Event].
func (StepAwaiting) EventType() string { return TypeStepAwaiting }

// EventType implements [Event].
func (TicketResolved) EventType() string { return TypeTicketResolved }

// EventType implements [Event].
func (ApprovalSaved) EventType() string { return TypeApprovalSaved }

// EventType implements [Event].
func (GrantRevoked) EventType() string { return TypeGrantRevoked }
