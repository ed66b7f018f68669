package events

import (
	"encoding/json"
	"time"
)

// Wire names of the event types. They are part of the stored format: never
// rename one. Each type has its own schema version; see [Version].
const (
	TypeRunStarted         = "RunStarted"
	TypeCatalogAdvertised  = "CatalogAdvertised"
	TypeToolCallRequested  = "ToolCallRequested"
	TypePermissionDecided  = "PermissionDecided"
	TypeToolCallStarted    = "ToolCallStarted"
	TypeToolResultRecorded = "ToolResultRecorded"
	TypeStepFinalized      = "StepFinalized"
	TypeRunEnded           = "RunEnded"
	TypeTicketIssued       = "TicketIssued"
	TypeStepAwaiting       = "StepAwaiting"
	TypeTicketResolved     = "TicketResolved"
	TypeApprovalSaved      = "ApprovalSaved"
	TypeGrantRevoked       = "GrantRevoked"
	TypeOutputFileStored   = "OutputFileStored"
	TypeOutputFileSwept    = "OutputFileSwept"
	TypeStateCommand       = "StateCommand"
)

// Event is one fact in a commit. Implementations are the payload structs of
// this package and [Unknown].
type Event interface {
	// EventType returns the wire name.
	EventType() string
}

// Rule is a permission rule as recorded in the log (the gate's rule, in the
// vocabulary's own words so that this package depends on nothing).
type Rule struct {
	Action    string `json:"action"`
	Resource  string `json:"resource"`
	Effect    string `json:"effect"`
	Source    string `json:"source,omitempty"`
	TicketTTL string `json:"ticket_ttl,omitempty"`
}

// Request is a permission request as recorded in the log.
type Request struct {
	Action    string   `json:"action"`
	Resources []string `json:"resources"`
	Save      []string `json:"save,omitempty"`
	Ask       bool     `json:"ask,omitempty"`
	// Root is the location's real path when the resources are paths in it
	// (see descriptor.Request); absent in logs written before it was added.
	Root string `json:"root,omitempty"`
}

// OutputLimits are the tool-output bounds pinned for a run.
type OutputLimits struct {
	MaxLines int `json:"max_lines"`
	MaxBytes int `json:"max_bytes"`
}

// RunStarted opens a run and pins its snapshot: replays and resumes use it.
type RunStarted struct {
	Agent         string       `json:"agent"`
	Location      string       `json:"location"`
	Project       string       `json:"project"`
	Rules         []Rule       `json:"rules"`
	Narrowing     string       `json:"narrowing"`
	Limits        OutputLimits `json:"limits"`
	PolicyDigest  string       `json:"policy_sha256"`
	EngineVersion string       `json:"engine_version"`
	// TicketTTLMs is how long a confirmation ticket waits for an answer
	// (milliseconds); 0 waits for ever.
	TicketTTLMs int64 `json:"ticket_ttl_ms,omitempty"`
	// ForkedFrom is set in a run forked from another (see [ForkedFrom]).
	ForkedFrom *ForkedFrom `json:"forked_from,omitempty"`
	// MCP are the MCP servers the run may see (see [MCPServerPin]), by
	// name; none: the run sees no MCP server's tool.
	MCP []MCPServerPin `json:"mcp,omitempty"`
	// Principal is who started the run, as the NATS server named it
	// ("nats:ACCOUNT/USER", from Nats-Request-Info), when the engine binds
	// runs to principals; empty otherwise, and in runs started before
	// principals were recorded (which no bound caller but an overseer sees).
	Principal string `json:"principal,omitempty"`
	// Place is the identity of the location the run's calls act on (see
	// [Place]): a host executes for the run only where its directory at
	// Location is that place. Absent in runs started before placement, which
	// any host that has the directory serves, as then.
	Place *Place `json:"place,omitempty"`
	// ConfigVersion is the version of the fleet's configuration document
	// the run's rules came from (engine config push; the revision of its
	// key in the cluster); 0 (absent) when they came from the host's own
	// user file.
	ConfigVersion uint64 `json:"config_version,omitempty"`
	// Model holds the agent settings of a run a model drives (engine
	// agent; see [ModelSettings]); absent for any other run.
	Model *ModelSettings `json:"model,omitempty"`
	// Sandbox is the sandbox the run's commands run under (see
	// [SandboxProfile]); absent: off, and in runs started before sandboxes.
	Sandbox *SandboxProfile `json:"sandbox,omitempty"`
}

// Place is a location's identity, so that one path on two machines is
// never taken for one place: the id in the location's marker file
// (.stepgate/location, written by the holder that first started a run
// there) and the inode numbers of the directory and of the marker as that
// holder saw them. A copy of the directory (another machine's checkout, a
// directory moved away and made again) has other inode numbers; a shared
// volume (NFS, a block volume) shows every holder the same ones.
type Place struct {
	ID      string `json:"id"`
	DirIno  uint64 `json:"dir_ino"`
	MarkIno uint64 `json:"mark_ino"`
	// Host is set for a location that could not be marked (a directory the
	// engine may not write; MarkIno is 0): then only Host holds it.
	Host string `json:"host,omitempty"`
}

// AdvertisedTool is one entry of an advertised catalogue.
type AdvertisedTool struct {
	Name     string `json:"name"`
	Identity string `json:"identity"`
}

// CatalogAdvertised records the tools (and their identities) a run's model was
// shown. Calls are checked against the latest one.
type CatalogAdvertised struct {
	Fingerprint string           `json:"fingerprint"`
	Tools       []AdvertisedTool `json:"tools"`
}

// ToolCallRequested records one call of a step as the model made it.
type ToolCallRequested struct {
	CallID string          `json:"call_id"`
	Tool   string          `json:"tool"`
	Args   json.RawMessage `json:"args,omitempty"`
	// Identity is the advertised identity of the tool, empty when the tool was
	// not advertised.
	Identity string `json:"identity,omitempty"`
}

// Verdict kinds as recorded in [PermissionDecided].
const (
	VerdictAllow   = "allow"
	VerdictBlock   = "block"
	VerdictConfirm = "confirm"
	// VerdictReject is recorded for calls refused before the gate (unknown,
	// stale, invalid input): they never reach a permission decision.
	VerdictReject = "reject"
)

// PermissionDecided records the verdict for one call and the rule that decided.
type PermissionDecided struct {
	CallID   string    `json:"call_id"`
	Verdict  string    `json:"verdict"`
	Reason   string    `json:"reason,omitempty"`
	Rule     *Rule     `json:"rule,omitempty"`
	Requests []Request `json:"requests,omitempty"`
	// Observed is what the tool saw of the world when the call was decided
	// (edit: the file's digest); the call is refused when it runs if the
	// world changed meanwhile, however late the approval came.
	Observed string `json:"observed,omitempty"`
	// Paths are the real paths the call's paths resolved to when it was
	// decided; the call is refused when it runs if one of them now resolves
	// elsewhere ("Path changed after permission approval: <path>"). Absent
	// in commits written before paths were recorded: such a call is not
	// checked.
	Paths []ResolvedPath `json:"paths,omitempty"`
}

// ResolvedPath is one path of a call as the tool named it, and the real
// path (symlinks resolved) it led to when the call was decided.
type ResolvedPath struct {
	Path string `json:"path"`
	Real string `json:"real"`
}

// ToolCallStarted is committed before the effect of a call that is not
// read-only. A started call without a result is in doubt after a crash.
type ToolCallStarted struct {
	CallID  string `json:"call_id"`
	Attempt int    `json:"attempt"`
}

// Part is one part of a result's model content.
type Part struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
	MIME string `json:"mime,omitempty"`
	Data []byte `json:"data,omitempty"`
}

// ToolResultRecorded records the model-visible result of one call.
type ToolResultRecorded struct {
	CallID     string          `json:"call_id"`
	Parts      []Part          `json:"parts"`
	Structured json.RawMessage `json:"structured,omitempty"`
	IsError    bool            `json:"is_error,omitempty"`
	// Files are the output files holding what the preview left out.
	Files []string `json:"files,omitempty"`
	// Found and Left are what a successful call found and left of what its
	// tool observes (edit: the file's digest as it read it and as it wrote
	// it, in the form of PermissionDecided.Observed); empty for tools that
	// report nothing. A later approval of a call of the same step on the
	// same file is held to what this call left (see spec/runs.md).
	Found string `json:"found,omitempty"`
	Left  string `json:"left,omitempty"`
	// Sandbox is what the sandbox enforced on the call's command (see
	// [SandboxRecord]); absent for a call that ran no command sandboxed.
	Sandbox *SandboxRecord `json:"sandbox,omitempty"`
}

// OutputFileStored records a tool's whole output spilled to a file (the
// model saw a preview naming it); the file is kept until Expires.
type OutputFileStored struct {
	Path    string    `json:"path"`
	Bytes   int64     `json:"bytes"`
	SHA256  string    `json:"sha256"`
	Expires time.Time `json:"expires"`
}

// EventType implements [Event].
func (OutputFileStored) EventType() string { return TypeOutputFileStored }

// OutputFileSwept records output files a host deleted after their
// retention.
type OutputFileSwept struct {
	Paths []string `json:"paths"`
}

// EventType implements [Event].
func (OutputFileSwept) EventType() string { return TypeOutputFileSwept }

// StepFinalized says every call of the step is terminal: its results may be
// published to the model.
type StepFinalized struct {
	Calls int `json:"calls"`
}

// Causes of [RunEnded].
const (
	CauseCompleted = "completed"
	CauseDeclined  = "declined"
	CauseCancelled = "cancelled"
	CauseFailed    = "failed"
)

// RunEnded ends a run; Ended absorbs.
type RunEnded struct {
	Cause  string `json:"cause"`
	Reason string `json:"reason,omitempty"`
}

// Unknown holds an event this build cannot read: an unknown type or a newer
// version. Folds skip it; it is re-encoded unchanged.
type Unknown struct {
	Type string          `json:"type"`
	V    int             `json:"v"`
	Data json.RawMessage `json:"data,omitempty"`
}

// EventType implements [Event].
func (RunStarted) EventType() string { return TypeRunStarted }

// EventType implements [Event].
func (CatalogAdvertised) EventType() string { return TypeCatalogAdvertised }

// EventType implements [Event].
func (ToolCallRequested) EventType() string { return TypeToolCallRequested }

// EventType implements [Event].
func (PermissionDecided) EventType() string { return TypePermissionDecided }

// EventType implements [Event].
func (ToolCallStarted) EventType() string { return TypeToolCallStarted }

// EventType implements [Event].
func (ToolResultRecorded) EventType() string { return TypeToolResultRecorded }

// EventType implements [Event].
func (StepFinalized) EventType() string { return TypeStepFinalized }

// EventType implements [Event].
func (RunEnded) EventType() string { return TypeRunEnded }

// EventType implements [Event]: the stored type name.
func (u Unknown) EventType() string { return u.Type }

// StateCommand sets one key of a run's state to a value, on behalf of the
// call that produced it (todowrite's list is the first such key). It is
// committed with the call's result, in the same settle commit.
type StateCommand struct {
	CallID string          `json:"call_id"`
	Key    string          `json:"key"`
	Value  json.RawMessage `json:"value"`
}

// EventType implements [Event].
func (StateCommand) EventType() string { return TypeStateCommand }
