// Package render tells a run as a person reads it: the show document (a
// run with its timeline: verdicts, rules, grants, tickets, results, times),
// printed as a text timeline or as one self-contained HTML report, the
// time-travel view of `engine show --at`, and the lines a scripted run
// prints. It fetches nothing: a caller gathers the run and its facts (the
// service's show and run_facts answers) and hands them to [BuildShow].
package render

import (
	"encoding/json"
	"time"

	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor/builtin"
)

// Show is what `engine show RUN` tells, in one place: the text timeline
// renders it and --json prints it. The run's own fields are the wire
// contract's, as the service's show endpoint answers (a reader of the run
// alone decodes the document as a client.Run); Timeline is what the verb
// adds to them from the project's grants and the run's log.
type Show struct {
	*sgclient.Run
	Timeline TimelineView `json:"timeline"`
}

// TimelineView is a run's steps and calls as a person reads them.
type TimelineView struct {
	// Timed is true when the run's commits were read (the run_facts
	// endpoint answered), so the times, durations and spilled-file sizes
	// are known.
	Timed bool `json:"timed"`
	// Started and Ended are the times of the run's first and last commit.
	Started *time.Time `json:"started,omitempty"`
	Ended   *time.Time `json:"ended,omitempty"`
	Steps   []StepView `json:"steps"`
	Todos   *TodosView `json:"todos,omitempty"`
}

// StepView is one step of the timeline.
type StepView struct {
	N     int        `json:"n"`
	Final bool       `json:"final"`
	Host  string     `json:"host,omitempty"`
	At    *time.Time `json:"at,omitempty"`
	Calls []CallView `json:"calls"`
}

// CallView is one call of a step: how it was decided, by what, and what
// became of it.
type CallView struct {
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
	Grant    *GrantView  `json:"grant,omitempty"`
	Ticket   *TicketView `json:"ticket,omitempty"`
	Attempts int         `json:"attempts,omitempty"`
	Result   *ResultView `json:"result,omitempty"`
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

// GrantView names a saved approval: who saved it and when (from its id).
type GrantView struct {
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

// TicketView is a confirmation and its answer: who, how, after how long.
type TicketView struct {
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

// ResultView is a call's model-visible result: its size and the files that
// hold what the preview left out.
type ResultView struct {
	IsError bool   `json:"is_error,omitempty"`
	Preview string `json:"preview"`
	// Bytes is the size of the model-visible content (text and data parts).
	Bytes int        `json:"bytes"`
	Files []FileView `json:"files,omitempty"`
}

// FileView is one spilled output file; Bytes is its size when the log was
// read (-1: unknown).
type FileView struct {
	Path  string `json:"path"`
	Bytes int64  `json:"bytes"`
}

// TodosView is the run's todo list as it stands.
type TodosView struct {
	Items builtin.TodoList `json:"items"`
	// Error is set when the recorded list does not decode.
	Error string `json:"error,omitempty"`
}
