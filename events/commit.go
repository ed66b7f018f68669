package events

import (
	"fmt"
	"time"
)

// Kind says what a commit does in the life of a run or a registry.
type Kind string

// Commit kinds.
const (
	KindStart    Kind = "start"    // a run begins
	KindCatalog  Kind = "catalog"  // a run's advertised catalogue changed
	KindDecide   Kind = "decide"   // verdicts and started calls, before any effect
	KindSettle   Kind = "settle"   // results of a step's calls
	KindStep     Kind = "step"     // decide and settle in one commit (no effect to guard)
	KindResolve  Kind = "resolve"  // a reply to a ticket
	KindEnd      Kind = "end"      // a run ends
	KindGrant    Kind = "grant"    // saved approvals changed outside a run
	KindRecover  Kind = "recover"  // a host settles what a crash left open
	KindSweep    Kind = "sweep"    // a host deleted expired output files
	KindRegistry Kind = "registry" // the location layer of the registry changed
)

// Commit is the envelope of one JetStream message: an atomic, ordered list of
// events. Exactly one message carries one commit.
type Commit struct {
	// ID is the commit's ULID; it doubles as the Nats-Msg-Id for de-duplication.
	ID string `json:"id"`
	// Run is the run the commit belongs to, empty for commits outside a run.
	Run string `json:"run,omitempty"`
	// Step is the step number (from 1) the commit belongs to, 0 for none.
	Step int `json:"step,omitempty"`
	// Kind says what the commit does.
	Kind Kind `json:"kind"`
	// At is when the committing host built the commit.
	At time.Time `json:"at"`
	// Host names the committing host.
	Host string `json:"host,omitempty"`
	// Prev is the id of the run's previous commit, the link of the run's
	// hash chain; empty for a run's first commit, for commits outside runs,
	// and in commits written before the chain existed.
	Prev string `json:"prev,omitempty"`
	// Events are applied in order.
	Events []Event `json:"events"`
}

// Validate reports whether the envelope is well formed enough to commit.
func (c *Commit) Validate() error {
	if c.ID == "" {
		return fmt.Errorf("commit without id: %w", ErrMalformed)
	}
	if c.Kind == "" {
		return fmt.Errorf("commit %s without kind: %w", c.ID, ErrMalformed)
	}
	if len(c.Events) == 0 {
		return fmt.Errorf("commit %s without events: %w", c.ID, ErrMalformed)
	}
	return nil
}
