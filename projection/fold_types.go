package projection

import "github.com/stepgate/stepgate/projection/fold"

// The folds' types, under the names callers use (see package fold).
type (
	// Run is the folded state of one run ([fold.Run]).
	Run = fold.Run
	// RunHeader is a run without its steps but the last ([fold.RunHeader]).
	RunHeader = fold.RunHeader
	// Step is one model turn's batch of calls ([fold.Step]).
	Step = fold.Step
	// Call is one tool call of a step ([fold.Call]).
	Call = fold.Call
	// Ticket is one confirmation request and its answer ([fold.Ticket]).
	Ticket = fold.Ticket
	// Status is where a run is in its life ([fold.Status]).
	Status = fold.Status
	// Divergence is where a run's hash chain broke ([fold.Divergence]).
	Divergence = fold.Divergence
	// Summary is one line of a run listing ([fold.Summary]).
	Summary = fold.Summary
	// Grant is a saved approval and its revocation ([fold.Grant]).
	Grant = fold.Grant
	// Grants folds saved approvals by id ([fold.Grants]).
	Grants = fold.Grants
	// Registration is one location-layer registration ([fold.Registration]).
	Registration = fold.Registration
	// Scope is one scope of the location layer ([fold.Scope]).
	Scope = fold.Scope
	// Registry folds the location layer by scope ([fold.Registry]).
	Registry = fold.Registry
	// Quarantined is one message no fold applied ([fold.Quarantined]).
	Quarantined = fold.Quarantined
	// Quarantine is the record of the messages skipped ([fold.Quarantine]).
	Quarantine = fold.Quarantine
)

// Run statuses ([fold.StatusRunning] and the others).
const (
	StatusRunning  = fold.StatusRunning
	StatusAwaiting = fold.StatusAwaiting
	StatusEnded    = fold.StatusEnded
)

// QuarantineKeep is how many quarantined messages a projection keeps listed
// ([fold.QuarantineKeep]).
const QuarantineKeep = fold.QuarantineKeep
