// Package executor turns typed Go tools into the raw form the engine drives (JSON
// arguments in, model content out) and runs the settle pipeline for one call:
// decode and validate the arguments, execute, encode and check the output, render
// what the model reads. It decides no permission and writes to no log: Prepare
// returns the permission requests a call raises, the caller asks the gate, and
// only then runs the call.
package executor

import "encoding/json"

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
	// call is prepared again: the tool compares it with the world. It is
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
	// book collects Paths while a first Prepare computes the call's requests.
	book *pathBook
}
