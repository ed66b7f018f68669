package client

import (
	"context"
	"errors"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/stepgate/stepgate/events"
)

// SubjectAt is the subject of endpoint on one host alone:
// "stepgate.at.<host token>.<endpoint>" (see events.HostToken). A host
// answers there exactly as on the service's subject, under the same
// permissions; a client that knows which host holds a run's location sends
// the run's steps there and saves the host that would have received them a
// hop to it (see DESIGN.md §8).
func SubjectAt(host, endpoint string) string {
	return SubjectPrefix + ".at." + events.HostToken(host) + "." + endpoint
}

// maxSticky bounds the runs a client remembers a host for; past it the
// memory starts again empty (a run's next step then goes through the
// service's queue group once).
const maxSticky = 10_000

// stickies remembers, per run, the host that decided its last step.
type stickies struct {
	mu    sync.Mutex
	hosts map[string]string
}

func (s *stickies) get(run string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hosts[run]
}

func (s *stickies) set(run, host string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if host == "" {
		delete(s.hosts, run)
		return
	}
	if s.hosts == nil || len(s.hosts) >= maxSticky {
		s.hosts = map[string]string{}
	}
	s.hosts[run] = host
}

// submitAt sends a step to the host that decided the run's last step, when
// the client knows it: done is false when that host is not there (gone,
// or restarting under another name) or gave up, and the step is to go
// through the service's queue group.
func (c *Client) submitAt(ctx context.Context, req SubmitStepRequest, out *StepOutcome) (done bool, err error) {
	host := c.sticky.get(req.Run)
	if host == "" {
		return false, nil
	}
	err = c.callAt(ctx, SubjectAt(host, EndpointSubmitStep), EndpointSubmitStep, req, out, c.submitEcho(req, out))
	if err == nil || ctx.Err() != nil || !errors.Is(err, nats.ErrNoResponders) && !errors.Is(err, context.DeadlineExceeded) {
		return true, err
	}
	c.sticky.set(req.Run, "")
	*out = StepOutcome{}
	return false, nil
}
