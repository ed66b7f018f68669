package client

import "github.com/stepgate/stepgate/events"

// RecordTurnRequest commits one model turn of a run a model drives (engine
// agent), before its calls are submitted as the step of the same number.
type RecordTurnRequest struct {
	Run  string                   `json:"run"`
	Turn events.ModelTurnRecorded `json:"turn"`
}

// TurnRecord answers RecordTurn.
type TurnRecord struct {
	Run  string `json:"run"`
	Turn int    `json:"turn"`
	// Again is true when the run had the turn already, the same (a request
	// sent again): nothing was committed.
	Again bool `json:"again,omitempty"`
}
