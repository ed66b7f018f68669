package client

// Live events of the web app's stream (GET /api/events, server-sent
// events): what a commit of the log did, read from the log itself, so a
// ticket answered on any host is seen on every one.
const (
	LiveTicketIssued   = "ticket_issued"
	LiveTicketResolved = "ticket_resolved"
	LiveRunChanged     = "run_changed"
	LiveRunEnded       = "run_ended"
	LiveGrantsChanged  = "grants_changed"
)

// LiveEvent is one event of the web app's live stream: the SSE event's
// name is Type and its data this value as JSON.
type LiveEvent struct {
	Type string `json:"type"`
	// Seq is the stream sequence of the commit that did it.
	Seq uint64 `json:"seq"`
	// Run and Step are the commit's run and step (none for a grant made
	// outside a run).
	Run  string `json:"run,omitempty"`
	Step int    `json:"step,omitempty"`
	// Ticket is the ticket issued or resolved.
	Ticket string `json:"ticket,omitempty"`
	// Project is the project of the ticket or grant, when known.
	Project string `json:"project,omitempty"`
}

// Session is what GET /api/session answers a signed-in operator: the
// principal its replies record and the CSRF token its state-changing
// requests carry in the X-CSRF-Token header (none for a bearer token).
type Session struct {
	Operator  string `json:"operator"`
	Principal string `json:"principal"`
	CSRF      string `json:"csrf,omitempty"`
}

// RunDetail is what the web app's GET /api/runs/{id} answers: the run as
// show answers it, and what its commits say beyond (run_facts).
type RunDetail struct {
	Run   *Run      `json:"run"`
	Facts *RunFacts `json:"facts,omitempty"`
}

// WebError is the body of every refusal of the web app's API: a stable
// code (the service's, or unauthorized, csrf, cross_origin) and a message.
type WebError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}
