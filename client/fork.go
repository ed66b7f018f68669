package client

import (
	"context"
	"time"

	"github.com/stepgate/stepgate/events"
)

// ForkRequest forks a run: a new run whose first At steps are the source
// run's, copied from the log (no tool runs again), pinned to the source's
// rules, so an agent can go on from there with another next step.
type ForkRequest struct {
	// Run is the source run.
	Run string `json:"run"`
	// At is the last step copied (from 1); it must be final.
	At int `json:"at"`
	// Fork is a run id the client chose for the fork (a ULID), so a fork
	// sent again after a lost answer — or after a failure halfway through
	// the copy — finishes the same fork instead of starting a second one;
	// default: the engine picks one.
	Fork string `json:"fork,omitempty"`
}

// ForkResult answers Fork: the forked run, where it was copied from, and
// the number of steps it holds (At). Its next step is At+1; ask
// materialize for its tools.
type ForkResult struct {
	Run        string            `json:"run"`
	ForkedFrom events.ForkedFrom `json:"forked_from"`
	Steps      int               `json:"steps"`
}

// Fork forks a run. The client picks the fork's id (unless req names one),
// so the request can be sent again without forking twice.
func (c *Client) Fork(ctx context.Context, req ForkRequest) (*ForkResult, error) {
	if req.Fork == "" {
		req.Fork = c.ids.New(time.Now())
	}
	return callAs[ForkResult](ctx, c, EndpointFork, req)
}
