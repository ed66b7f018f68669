package render

import (
	"time"

	"github.com/oklog/ulid/v2"
	sgclient "github.com/stepgate/stepgate/client"
)

// callKey names a call within a run: call ids are the model's, unique only
// within a step.
type callKey struct {
	step int
	id   string
}

// Facts is what a run's commits say beyond its projection (the
// run_facts endpoint's answer: commit times, the state each call set,
// spilled-file sizes), indexed for [BuildShow]; make it with [IndexFacts].
type Facts struct {
	first, last *time.Time
	stepAt      map[int]*time.Time // a step's first commit
	requested   map[callKey]time.Time
	result      map[callKey]time.Time
	state       map[callKey][]string
	issued      map[string]time.Time
	resolved    map[string]time.Time
	files       map[string]int64
}

// IndexFacts indexes the engine's run_facts answer for [BuildShow].
func IndexFacts(rf *sgclient.RunFacts) *Facts {
	f := &Facts{first: rf.Started, last: rf.Ended, stepAt: map[int]*time.Time{}, requested: map[callKey]time.Time{}, result: map[callKey]time.Time{},
		state: map[callKey][]string{}, issued: map[string]time.Time{}, resolved: map[string]time.Time{}, files: map[string]int64{}}
	for _, s := range rf.Steps {
		f.stepAt[s.Step] = &s.At
	}
	for _, c := range rf.Calls {
		k := callKey{c.Step, c.Call}
		if c.RequestedAt != nil {
			f.requested[k] = *c.RequestedAt
		}
		if c.ResultAt != nil {
			f.result[k] = *c.ResultAt
		}
		if len(c.State) > 0 {
			f.state[k] = c.State
		}
	}
	for _, t := range rf.Tickets {
		if t.IssuedAt != nil {
			f.issued[t.Ticket] = *t.IssuedAt
		}
		if t.ResolvedAt != nil {
			f.resolved[t.Ticket] = *t.ResolvedAt
		}
	}
	for _, file := range rf.Files {
		f.files[file.Path] = file.Bytes
	}
	return f
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
