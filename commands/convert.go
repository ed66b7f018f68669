package commands

import (
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor"
)

// The vocabulary has its own copies of rules, requests and parts so that it
// depends on nothing; rules and requests convert in internal/vocab, results
// here.

func toEventResult(callID string, r executor.Result) events.ToolResultRecorded {
	return toEventResultIn(nil, callID, r)
}

// toEventResultIn is toEventResult with its parts appended to dst.
func toEventResultIn(dst []events.Part, callID string, r executor.Result) events.ToolResultRecorded {
	for _, p := range r.Parts {
		dst = append(dst, events.Part{Type: p.Type, Text: p.Text, MIME: p.MIME, Data: p.Data})
	}
	return events.ToolResultRecorded{CallID: callID, Parts: dst, Structured: r.Structured, IsError: r.IsError,
		Found: r.Acted.Found, Left: r.Acted.Left}
}
