package service

import (
	"maps"
	"sync"
	"time"

	"github.com/nats-io/nats.go/micro"
	"github.com/stepgate/stepgate/commands"
)

// stats counts each endpoint's requests as the service answers them: from
// a request's receipt to its answer, and how it ended. micro's own figures
// of an endpoint measure its handler, which hands every valid request to a
// goroutine (nats.go runs one subscription's handler one message at a
// time, so a handler that did the work would make the endpoint serve one
// request at a time): they count requests, the errors of requests refused
// before any work (invalid_input, unavailable while stopping), and the
// time the hand-over took. These figures are the work's; micro publishes
// them as each endpoint's stats "data". Safe for concurrent use.
type stats struct {
	mu sync.Mutex
	by map[string]*counter
}

func newStats() *stats { return &stats{by: map[string]*counter{}} }

// of is the endpoint's counter.
func (s *stats) of(endpoint string) *counter {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.by[endpoint]
	if c == nil {
		c = &counter{}
		s.by[endpoint] = c
	}
	return c
}

// data is micro's StatsHandler: the endpoint's figures.
func (s *stats) data(e *micro.Endpoint) any {
	s.mu.Lock()
	c := s.by[e.Name]
	s.mu.Unlock()
	if c == nil {
		return Figures{}
	}
	return c.figures()
}

// Figures are one endpoint's answered requests, as its stats "data" holds
// them; times are nanoseconds, as micro's own.
type Figures struct {
	Requests int `json:"num_requests"`
	Errors   int `json:"num_errors"`
	// ErrorCodes counts the errors by their stable code.
	ErrorCodes map[string]int `json:"error_codes,omitempty"`
	LastError  string         `json:"last_error,omitempty"`
	// ProcessingTime is the sum, over the answered requests, of the time
	// from a request's receipt to its answer.
	ProcessingTime        time.Duration `json:"processing_time"`
	AverageProcessingTime time.Duration `json:"average_processing_time"`
}

// counter is one endpoint's figures.
type counter struct {
	mu sync.Mutex
	f  Figures
}

// done counts one answered request: what it took and how it ended.
func (c *counter) done(took time.Duration, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.f.Requests++
	c.f.ProcessingTime += took
	c.f.AverageProcessingTime = c.f.ProcessingTime / time.Duration(c.f.Requests)
	if err != nil {
		c.f.Errors++
		c.f.LastError = err.Error()
		if c.f.ErrorCodes == nil {
			c.f.ErrorCodes = map[string]int{}
		}
		c.f.ErrorCodes[commands.Code(err)]++
	}
}

func (c *counter) figures() Figures {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.f
	f.ErrorCodes = maps.Clone(c.f.ErrorCodes)
	return f
}
