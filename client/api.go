package client

import (
	"encoding/json"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/gate"
)

// StartRunRequest starts a run of an agent in a location.
type StartRunRequest struct {
	// Agent names the agent whose rules apply; default "build". An unknown
	// agent gets a deny-all ruleset.
	Agent string `json:"agent,omitempty"`
	// Location is the absolute path of the workspace root; it must exist.
	Location string `json:"location"`
	// Project groups runs for saved approvals; default: derived from the location.
	Project string `json:"project,omitempty"`
	// Rules are per-run overrides appended after the agent's rules. They may
	// only narrow: effects deny or ask.
	Rules []gate.Rule `json:"rules,omitempty"`
	// DisableTools narrows the run to DenyAll: nothing is advertised and every
	// call is blocked.
	DisableTools bool `json:"disable_tools,omitempty"`
	// TicketTTL bounds how long a confirmation waits for an answer (a Go
	// duration such as "15m"). The agent's configured ticket_ttl applies
	// too: the shorter wins; with neither, tickets wait for ever. An
	// expired ticket settles as "Approval expired before an answer; the
	// call did not run."
	TicketTTL string `json:"ticket_ttl,omitempty"`
	// Run is a run id the client chose (a ULID), so a start sent again after
	// a lost answer returns the same run instead of starting a second one;
	// default: the engine picks one.
	Run string `json:"run,omitempty"`
	// Model holds the agent settings of a run a model drives (engine
	// agent), pinned in its start (never an API key).
	Model *events.ModelSettings `json:"model,omitempty"`
}

// RunInfo answers StartRun.
type RunInfo struct {
	Run     string  `json:"run"`
	Catalog Catalog `json:"catalog"`
}

// MaterializeRequest asks for a run's visible tools at the start of a turn.
type MaterializeRequest struct {
	Run string `json:"run"`
}

// ToolDef is one tool as the model sees it.
type ToolDef struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"input_schema"`
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
}

// Catalog is the set of tools visible to a run, with its fingerprint.
type Catalog struct {
	Fingerprint string    `json:"fingerprint"`
	Tools       []ToolDef `json:"tools"`
}

// CallRequest is one tool call of a step, as the model made it.
type CallRequest struct {
	ID   string          `json:"id"`
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args,omitempty"`
}

// SubmitStepRequest submits one model turn's calls, in model order.
type SubmitStepRequest struct {
	Run   string        `json:"run"`
	Step  int           `json:"step"`
	Calls []CallRequest `json:"calls"`
	// Turn, for a run a model drives, is the model's turn whose calls
	// these are (turn Step, its calls these, by id and name, in order).
	// The engine records it as RecordTurn does, in a commit of its own
	// that comes before any of the step's: a turn it has already, the
	// same, is not recorded again. Sent with its step, the turn costs no
	// request of its own, and its commit goes on while the calls are
	// checked (and, when all of them are read-only, run).
	Turn *events.ModelTurnRecorded `json:"turn,omitempty"`
}

// CallResult is what the model gets back for one call.
type CallResult struct {
	CallID  string `json:"call_id"`
	Tool    string `json:"tool"`
	Verdict string `json:"verdict"`
	// Rule is the rule that decided, if one matched.
	Rule    *gate.Rule      `json:"rule,omitempty"`
	Content string          `json:"content"`
	IsError bool            `json:"is_error,omitempty"`
	Parts   []ResultPart    `json:"parts,omitempty"`
	Output  json.RawMessage `json:"structured,omitempty"`
}

// ResultPart is a non-text part of a result (media).
type ResultPart struct {
	Type string `json:"type"`
	MIME string `json:"mime,omitempty"`
	Data []byte `json:"data,omitempty"`
}

// StepOutcome answers SubmitStep once the step is final: one result per call,
// in model order.
type StepOutcome struct {
	Run     string       `json:"run"`
	Step    int          `json:"step"`
	Final   bool         `json:"final"`
	Results []CallResult `json:"results"`
	// Tickets are the calls waiting for a human while the step is not final.
	Tickets []TicketView `json:"tickets,omitempty"`
	// Host is the host that decided the step: one that holds the run's
	// location when a call acts on it. A client may send the run's next
	// step to it (SubjectAt); any host answers either way.
	Host string `json:"host,omitempty"`
}

// EndRunRequest ends a run.
type EndRunRequest struct {
	Run    string `json:"run"`
	Cause  string `json:"cause,omitempty"` // default completed
	Reason string `json:"reason,omitempty"`
}

// ShowRequest asks for one run in full.
type ShowRequest struct {
	Run string `json:"run"`
}
