package commands

import (
	"slices"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor"
)

// fitLimits bound a result spilled only so that its commit fits one message.
var fitLimits = executor.Limits{MaxLines: 100, MaxBytes: 4096}

// fit keeps a commit within one message: while its results (and their
// arguments) would exceed the log's limit, the largest result is spilled to
// a file of its own and replaced by a short preview, the file recorded with
// OutputFileStored. A step therefore never fails for being large; only
// arguments, which are the model's and are not cut, can still be too large.
func (e *Engine) fit(c *events.Commit) {
	limit := e.log.MaxMsgSize() * 9 / 10 // room for the envelope
	owned := false
	for estimate(c) > limit {
		i, size := -1, 0
		for j, ev := range c.Events {
			if r, ok := ev.(events.ToolResultRecorded); ok {
				if n := resultSize(r); n > size {
					i, size = j, n
				}
			}
		}
		if i < 0 || size <= fitLimits.MaxBytes {
			return // nothing left to spill: the commit fails as too large
		}
		if !owned { // the events may be the caller's, kept for a retry
			c.Events, owned = slices.Clone(c.Events), true
		}
		r := c.Events[i].(events.ToolResultRecorded)
		bounded, sp := e.store.Bound(fromEventResult(r), fitLimits)
		nr := toEventResult(r.CallID, bounded)
		nr.Files = r.Files
		if sp != nil {
			nr.Files = append(nr.Files, sp.Path)
			c.Events = append(c.Events, spilledEvent(sp))
		}
		c.Events[i] = nr
	}
}

// estimate is a generous guess at a commit's encoded size: its results,
// arguments and requests (with room for escaping), plus the envelope.
func estimate(c *events.Commit) int {
	n := 512
	for _, ev := range c.Events {
		switch ev := ev.(type) {
		case events.ToolResultRecorded:
			n += resultSize(ev)*5/4 + 128
		case events.ToolCallRequested:
			n += len(ev.Args)*5/4 + 256
		case events.PermissionDecided:
			for _, r := range ev.Requests {
				for _, res := range r.Resources {
					n += len(res)*5/4 + 16
				}
			}
			n += 256
		default:
			n += 512
		}
	}
	return n
}

func resultSize(r events.ToolResultRecorded) int {
	n := len(r.Structured)
	for _, p := range r.Parts {
		n += len(p.Text) + len(p.Data)*4/3
	}
	return n
}

func fromEventResult(r events.ToolResultRecorded) executor.Result {
	parts := make([]executor.Part, len(r.Parts))
	for i, p := range r.Parts {
		parts[i] = executor.Part{Type: p.Type, Text: p.Text, MIME: p.MIME, Data: p.Data}
	}
	return executor.Result{Parts: parts, Structured: r.Structured, IsError: r.IsError}
}
