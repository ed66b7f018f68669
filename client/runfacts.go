package client

import "time"

// RunFactsRequest asks what a run's commits say beyond its projection.
type RunFactsRequest struct {
	Run string `json:"run"`
}

// RunFacts is what a run's commits say beyond its projection (see
// [Run]): when each step, call and ticket happened, the sizes of the
// output files its results spilled to, the run-state keys each call set,
// and the saved approvals its saved-rule verdicts name. engine show reads
// it for its timeline.
type RunFacts struct {
	Run string `json:"run"`
	// Started and Ended are the times of the run's first and last commit.
	Started *time.Time  `json:"started,omitempty"`
	Ended   *time.Time  `json:"ended,omitempty"`
	Steps   []StepAt    `json:"steps,omitempty"`
	Calls   []CallAt    `json:"calls,omitempty"`
	Tickets []TicketAt  `json:"tickets,omitempty"`
	Files   []FileBytes `json:"files,omitempty"`
	// Grants are the project's saved approvals in force whose action and
	// resource a call's saved rule names.
	Grants []Grant `json:"grants,omitempty"`
}

// StepAt is the time of a step's first commit.
type StepAt struct {
	Step int       `json:"step"`
	At   time.Time `json:"at"`
}

// CallAt is when a call was requested and got its result (the commits'
// times), and the run-state keys it set.
type CallAt struct {
	Step        int        `json:"step"`
	Call        string     `json:"call"`
	RequestedAt *time.Time `json:"requested_at,omitempty"`
	ResultAt    *time.Time `json:"result_at,omitempty"`
	State       []string   `json:"state,omitempty"`
}

// TicketAt is when a ticket was issued and resolved.
type TicketAt struct {
	Ticket     string     `json:"ticket"`
	IssuedAt   *time.Time `json:"issued_at,omitempty"`
	ResolvedAt *time.Time `json:"resolved_at,omitempty"`
}

// FileBytes is the size of one spilled output file as recorded.
type FileBytes struct {
	Path  string `json:"path"`
	Bytes int64  `json:"bytes"`
}
