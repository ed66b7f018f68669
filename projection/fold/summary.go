package fold

import "time"

// Summary is one line of a run listing.
type Summary struct {
	ID      string `json:"id"`
	Agent   string `json:"agent"`
	Status  Status `json:"status"`
	Cause   string `json:"cause,omitempty"`
	Steps   int    `json:"steps"`
	LastSeq uint64 `json:"last_seq"`
	// LastAt is when the run's last commit was made (see [Run.LastAt]).
	LastAt time.Time `json:"last_at,omitzero"`
	// Diverged is set when the run's hash chain broke (see [Run.Diverged]).
	Diverged bool `json:"diverged,omitempty"`
}

// Summary returns the run's listing line.
func (r *Run) Summary() Summary {
	return summaryOf(r.ID, r.Snapshot.Agent, r.Status, r.End, len(r.Steps), r.LastSeq, r.LastAt, r.Diverged)
}
