package commands

import (
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor"
)

// envelopeRoom is what a commit's message needs besides its encoded body
// (headers), kept free of the log's limit.
const envelopeRoom = 4 << 10

// commitBudget is the largest encoded commit fit lets through.
func (b *base) commitBudget() int { return b.log.MaxMsgSize() - envelopeRoom }

// fit makes the results c records final before c is committed, so that c
// fits one message: while the encoded commit would exceed the log's limit,
// the output store shortens its results against the commit's budget (see
// executor.OutputStore.Fit: previews naming files that hold them whole,
// the files recorded with OutputFileStored at c's end). A settle commit
// therefore always fits: what no bound can shorten is the model's
// arguments, and a step whose arguments cannot fit is refused before any
// effect (see checkBudget). Each of calls whose result c records gets the
// result as fitted, which is the one the model is answered with. It
// reports whether it changed c. The output store cuts results in two
// places only: Bound at execution, to the run's limits, and Fit here, to
// the commit's budget; nothing at commit time changes them. from is where
// the run stands (the predecessor c will name counts in its size).
func (b *base) fit(c *events.Commit, from runAt, calls ...*planned) bool {
	budget := b.commitBudget()
	if boundOf(c.Events) <= budget {
		return false // the common case: no encoding needed to know
	}
	c.Prev = from.prev
	total, err := encodedSize(c)
	if err != nil || total <= budget {
		return false // one that does not encode fails at commit the same way
	}
	var (
		at []int // the index in c.Events of each result
		rs []executor.Bounded
	)
	for i, ev := range c.Events {
		if r, ok := ev.(events.ToolResultRecorded); ok {
			at = append(at, i)
			rs = append(rs, executor.Bounded{Result: fromEventResult(r), Files: r.Files})
		}
	}
	callID := func(i int) string { return c.Events[at[i]].(events.ToolResultRecorded).CallID }
	size := func(i int, r executor.Bounded) int { return eventSize(toRecorded(callID(i), r)) }
	record := func(sp *executor.Spilled) int { return eventSize(spilledEvent(sp)) }
	sps, changed := b.store.Fit(rs, executor.Budget{Limit: budget, Used: total, Floor: b.floor, Size: size, Record: record})
	if !changed {
		return false
	}
	byID := make(map[string]*planned, len(calls))
	for _, p := range calls {
		if p.terminal {
			byID[p.req.ID] = p
		}
	}
	for i, r := range rs {
		nr := toRecorded(callID(i), r)
		was := c.Events[at[i]].(events.ToolResultRecorded)
		nr.Found, nr.Left, nr.Sandbox = was.Found, was.Left, was.Sandbox // not the model's: fitting leaves them
		c.Events[at[i]] = nr
		if p := byID[nr.CallID]; p != nil {
			p.result = nr
		}
	}
	for _, sp := range sps {
		c.Events = append(c.Events, spilledEvent(sp))
	}
	return true
}

// toRecorded is the event recording r as call id's result.
func toRecorded(id string, r executor.Bounded) events.ToolResultRecorded {
	nr := toEventResult(id, r.Result)
	nr.Files = r.Files
	return nr
}

// encodedSize is the exact size of c encoded.
func encodedSize(c *events.Commit) (int, error) {
	b, err := events.Append(nil, c)
	return len(b), err
}

// eventSize is ev's size in an encoded commit: its payload, its type and
// version around it and a separator (a few bytes over, never under).
func eventSize(ev events.Event) int {
	b, err := events.AppendPayload(nil, ev)
	if err != nil {
		return 0
	}
	return len(b) + len(ev.EventType()) + 32
}

// fromEventResult is the executor result r records.
func fromEventResult(r events.ToolResultRecorded) executor.Result {
	parts := make([]executor.Part, len(r.Parts))
	for i, p := range r.Parts {
		parts[i] = executor.Part{Type: p.Type, Text: p.Text, MIME: p.MIME, Data: p.Data}
	}
	return executor.Result{Parts: parts, Structured: r.Structured, IsError: r.IsError}
}
