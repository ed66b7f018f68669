package main

import (
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/step"
)

// callKey names a call within a run: call ids are the model's, unique only
// within a step.
type callKey struct {
	step int
	id   string
}

// logFacts is what a run's commits say beyond its projection: when each
// call was requested and got its result, when each ticket was issued and
// answered, the spilled files' sizes and the state keys each call set.
type logFacts struct {
	first, last *time.Time
	stepAt      map[int]*time.Time // a step's first commit
	requested   map[callKey]time.Time
	result      map[callKey]time.Time
	state       map[callKey][]string
	issued      map[string]time.Time
	resolved    map[string]time.Time
	files       map[string]int64
}

// readFacts gathers the facts of a run's commits, in log order. A message
// that did not decode (the projection quarantined it) says nothing.
func readFacts(stored []step.Stored) *logFacts {
	f := &logFacts{stepAt: map[int]*time.Time{}, requested: map[callKey]time.Time{}, result: map[callKey]time.Time{},
		state: map[callKey][]string{}, issued: map[string]time.Time{}, resolved: map[string]time.Time{}, files: map[string]int64{}}
	for _, s := range stored {
		c := s.Commit
		if c == nil {
			continue
		}
		at := c.At.UTC()
		if f.first == nil {
			f.first = &at
		}
		f.last = &at
		if _, ok := f.stepAt[c.Step]; !ok && c.Step > 0 {
			f.stepAt[c.Step] = &at
		}
		for _, e := range c.Events {
			f.add(c.Step, at, e)
		}
	}
	return f
}

func (f *logFacts) add(step int, at time.Time, e events.Event) {
	switch e := e.(type) {
	case events.ToolCallRequested:
		if _, ok := f.requested[callKey{step, e.CallID}]; !ok {
			f.requested[callKey{step, e.CallID}] = at
		}
	case events.ToolResultRecorded:
		f.result[callKey{step, e.CallID}] = at
	case events.StateCommand:
		k := callKey{step, e.CallID}
		f.state[k] = append(f.state[k], e.Key)
	case events.TicketIssued:
		f.issued[e.ID] = at
	case events.TicketResolved:
		f.resolved[e.Ticket] = at
	case events.OutputFileStored:
		f.files[e.Path] = e.Bytes
	}
}

// idTime is the time a ULID was made at, or nil when id is not one.
func idTime(id string) *time.Time {
	u, err := ulid.ParseStrict(id)
	if err != nil {
		return nil
	}
	t := ulid.Time(u.Time()).UTC()
	return &t
}
