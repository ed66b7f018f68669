package client

import (
	"encoding/json"
	"time"

	"github.com/stepgate/stepgate/events"
)

// Run statuses.
const (
	StatusRunning  = "running"
	StatusAwaiting = "awaiting"
	StatusEnded    = "ended"
)

// Run is one run in full, as show answers it: every step, every call with
// its verdict, the rule that decided and its result, every ticket.
type Run struct {
	ID string `json:"id"`
	// Snapshot is what the run's start pinned.
	Snapshot events.RunStarted `json:"snapshot"`
	// Status is running, awaiting or ended.
	Status string `json:"status"`
	// End holds the cause once the run has ended.
	End *events.RunEnded `json:"end,omitempty"`
	// Catalog is the latest advertised catalogue.
	Catalog events.CatalogAdvertised `json:"catalog"`
	// Steps are numbered from 1: Steps[i].N == i+1.
	Steps []Step `json:"steps"`
	// Tickets are every confirmation the run asked for, in issue order.
	Tickets []Ticket `json:"tickets,omitempty"`
	// Turns are the model's responses of a run a model drives (engine
	// agent), numbered from 1; turn n's calls are step n's.
	Turns []events.ModelTurnRecorded `json:"turns,omitempty"`
	// State is the run state calls set, by key (the todo list is "todos").
	State map[string]json.RawMessage `json:"state,omitempty"`
	// LastSeq is the stream sequence of the run's last commit.
	LastSeq uint64 `json:"last_seq"`
	// Commits counts the commits applied.
	Commits int `json:"commits"`
	// LastCommit is the id of the run's last commit.
	LastCommit string `json:"last_commit,omitempty"`
	// LastAt is when the run's last commit was made, by the committing
	// host's clock.
	LastAt time.Time `json:"last_at,omitzero"`
	// Diverged is set when a commit broke the run's hash chain; the run
	// takes no more steps.
	Diverged *Divergence `json:"diverged,omitempty"`
}

// Divergence says where a run's hash chain broke.
type Divergence struct {
	// Seq is the stream sequence of the commit that broke the chain.
	Seq uint64 `json:"seq"`
	// Commit is that commit's id, Step its step and Host its host.
	Commit string `json:"commit"`
	Step   int    `json:"step,omitempty"`
	Host   string `json:"host,omitempty"`
	// Want is the run's last commit as the engine holds it; Got is the
	// predecessor the commit named (empty: it named none).
	Want string `json:"want"`
	Got  string `json:"got"`
}

// Step is one model turn's batch of calls.
type Step struct {
	N     int    `json:"n"`
	Calls []Call `json:"calls"`
	Final bool   `json:"final"`
	// Host made the step's latest commit.
	Host string `json:"host,omitempty"`
}

// Call is one tool call of a step and what became of it.
type Call struct {
	ID       string          `json:"id"`
	Tool     string          `json:"tool"`
	Args     json.RawMessage `json:"args,omitempty"`
	Identity string          `json:"identity,omitempty"`
	// Decision is nil until the call was decided.
	Decision *events.PermissionDecided `json:"decision,omitempty"`
	// Attempts counts the times the call was started.
	Attempts int `json:"attempts,omitempty"`
	// Result is nil until the call is terminal.
	Result *events.ToolResultRecorded `json:"result,omitempty"`
	// RanOn is the host that executed the call (the host of the commit that
	// recorded its result); empty when its result was recorded without it
	// running (blocked, refused, rejected, expired, indeterminate after a
	// crash) and while it has none.
	RanOn string `json:"ran_on,omitempty"`
	// Ticket is the id of the call's confirmation ticket, if it needed one.
	Ticket string `json:"ticket,omitempty"`
}

// Ticket is one confirmation request of a run and its answer.
type Ticket struct {
	TicketIssued
	Step       int                    `json:"step"`
	Resolution *events.TicketResolved `json:"resolution,omitempty"`
}

// TicketIssued is a confirmation request: the call it holds back, what it
// asks, and the digests a reply is checked against.
type TicketIssued struct {
	ID       string           `json:"id"`
	CallID   string           `json:"call_id"`
	Tool     string           `json:"tool"`
	Identity string           `json:"identity"`
	ArgsSHA  string           `json:"args_sha256"`
	Requests []events.Request `json:"requests,omitempty"`
	// Kind is permission, input or escalation (a call the sandbox refused
	// asks to run again outside it).
	Kind string `json:"kind"`
	// PolicySHA is the digest of the ruleset the verdict came from.
	PolicySHA string `json:"policy_sha256"`
	// Deadline is when the ticket expires, if it does.
	Deadline *time.Time `json:"deadline,omitempty"`
	// Project is the run's project: an "always" reply saves approvals there.
	Project string `json:"project"`
	// Trace is the W3C traceparent of the call's span when the engine
	// traces (see the README's Tracing): the host that resolves the ticket
	// continues that trace.
	Trace string `json:"trace,omitempty"`
	// Escalation, on an escalation ticket, says what the sandbox refused
	// and holds the sandboxed attempt's result.
	Escalation *events.Escalation `json:"escalation,omitempty"`
}

// Step returns the run's step numbered n, or nil.
func (r *Run) Step(n int) *Step {
	for i := range r.Steps {
		if r.Steps[i].N == n {
			return &r.Steps[i]
		}
	}
	return nil
}

// Ticket returns the run's ticket with that id, or nil.
func (r *Run) Ticket(id string) *Ticket {
	for i := range r.Tickets {
		if r.Tickets[i].ID == id {
			return &r.Tickets[i]
		}
	}
	return nil
}

// RunSummary is one line of a run listing (runs, end_run).
type RunSummary struct {
	ID      string `json:"id"`
	Agent   string `json:"agent"`
	Status  string `json:"status"`
	Cause   string `json:"cause,omitempty"`
	Steps   int    `json:"steps"`
	LastSeq uint64 `json:"last_seq"`
	// LastAt is when the run's last commit was made, by the committing
	// host's clock (engine runs --idle); absent from a run the host
	// checkpointed before it kept the time, until the run's next commit.
	LastAt time.Time `json:"last_at,omitzero"`
	// Diverged is set when the run's hash chain broke.
	Diverged bool `json:"diverged,omitempty"`
}

// Grant is a saved approval and, once withdrawn, its revocation.
type Grant struct {
	events.ApprovalSaved
	Revoked *events.GrantRevoked `json:"revoked,omitempty"`
}
