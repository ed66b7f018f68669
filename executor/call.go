// Package executor turns typed Go tools into the raw form the engine drives (JSON
// arguments in, model content out) and runs the settle pipeline for one call:
// decode and validate the arguments, execute, encode and check the output, render
// what the model reads. It decides no permission and writes to no log: Prepare
// returns the permission requests a call raises, the caller asks the gate, and
// only then runs the call.
package executor

import (
	"encoding/json"

	"github.com/stepgate/stepgate/executor/sandbox"
)

// Call is the context given to a tool for one call. Tools never see grants or the log.
type Call struct {
	Run      string `json:"run"`      // run id
	Agent    string `json:"agent"`    // the agent the run belongs to
	Step     int    `json:"step"`     // step number within the run
	CallID   string `json:"call_id"`  // the model's id for this call
	Location string `json:"location"` // absolute path of the run's workspace root
	// Answers are a human's reply to the call's input ticket (tools that
	// await input, see AwaitsInput); empty otherwise.
	Answers json.RawMessage `json:"answers,omitempty"`
	// Observed is what the tool saw when the call was decided (see
	// WithObserve), handed back by the engine when an approved or recovered
	// call is prepared again — or what calls of its step that ran since
	// made of it, as they reported it (see Acted): the tool compares it
	// with the world. It is
	// empty for a call that runs as it is decided (nothing waited, the
	// tool acts on what it finds; Prepare records the observation for the
	// verdict, see Prepared.Observed) and for one that follows an earlier
	// call of its step on the same path (see Prepared.Follow).
	Observed string `json:"observed,omitempty"`
	// Paths are the real paths the call's paths resolved to when it was
	// decided (see Call.Resolve): recorded by Prepare on a first decision,
	// and handed back by the engine, like Observed, when an approved or
	// recovered call is prepared again.
	Paths []ResolvedPath `json:"paths,omitempty"`
	// Sandbox is the call's sandbox policy, resolved by the engine from
	// its profile: the tools that spawn processes (bash) run them through
	// sandbox.Command under it. Nil or Mode Off: unsandboxed, with the host
	// user's authority.
	Sandbox *sandbox.Policy `json:"sandbox,omitempty"`
	// Sandboxes, when set, runs the call's sandboxed processes on warm
	// helpers (sandbox.Pool.Command) instead of one helper per process
	// (sandbox.Command); the engine owns it. Not recorded.
	Sandboxes *sandbox.Pool `json:"-"`
	// book collects Paths while a first Prepare computes the call's requests.
	book *pathBook
	// acted receives what the call reports with [Call.Acted] while it runs.
	acted *Acted
	// contained receives what the sandbox enforced ([Call.Contained]).
	contained **sandbox.Enforced
}

// Contained reports, while the call runs, what the sandbox enforced on the
// command it ran (see [Result.Sandbox]); the last report wins. Safe to
// call on a Call that is not running (it then does nothing).
func (c Call) Contained(e sandbox.Enforced) {
	if c.contained != nil {
		*c.contained = &e
	}
}

// Acted is what a call found and left of what its tool observes (see
// WithObserve): edit, the digest of the file as it read it and as it wrote
// it. The engine records it with the result, so a call of the same step
// decided before this one ran can be held to what this one left instead of
// what it observed (see Call.Observed). Empty for a call that reported
// nothing, and for every failed call.
type Acted struct {
	Found string `json:"found,omitempty"` // the observation as the call found it when it ran
	Left  string `json:"left,omitempty"`  // the observation once its effect was done
}

// Acted reports, while the call runs, what it found and left of what its
// tool observes (see [Acted]); the last report wins. It is kept only when
// the call succeeds. Safe to call on a Call that is not running (it then
// does nothing).
func (c Call) Acted(found, left string) {
	if c.acted != nil {
		*c.acted = Acted{Found: found, Left: left}
	}
}
