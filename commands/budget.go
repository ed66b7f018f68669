package commands

import (
	"fmt"
	"strings"
	"time"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor"
)

// resultFloor is the most room a call's result takes once fit shortened it
// as far as it goes — the marker alone, the file named twice, and the
// file's OutputFileStored — for a call id of no bytes (each byte of an id
// takes at most 6 more).
func resultFloor(store *executor.OutputStore) int {
	const callID = ""
	path := store.PathOf(strings.Repeat("0", 26))
	r := events.ToolResultRecorded{CallID: callID, IsError: true, Files: []string{path},
		Parts: []events.Part{{Type: executor.PartText, Text: executor.Marker(path)}}}
	f := events.OutputFileStored{Path: path, Bytes: 1 << 40, SHA256: strings.Repeat("0", 64), Expires: time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)}
	return eventSize(r) + eventSize(f) + 2
}

// checkBudget refuses, before any effect, a decided step whose commits
// cannot fit one message each: the decide events (the model's arguments,
// the resources and tickets derived from them), and the settle commit with
// every result shortened as far as fit goes (the marker line naming its
// file). What passes always commits: fit can shorten every result that
// far. The refusal is invalid_input; nothing was committed or run.
func (h *submitter) checkBudget(p *plan) error {
	budget := h.commitBudget()
	settle, decide := boundOf(nil)+wrap, boundOf(nil)
	for _, c := range p.calls {
		settle += h.floor + 6*len(c.req.ID)
		decide += boundDecide(c)
	}
	if settle > budget {
		return fmt.Errorf("step %d: %d calls' results cannot fit one commit of %d bytes even as file references: %w",
			p.step, len(p.calls), budget, ErrInvalidRequest)
	}
	one := p.oneCommit()
	if one {
		decide += settle
	}
	if decide <= budget {
		return nil // the usual step: known to fit without encoding it
	}
	c := h.newCommit(p.run, p.step, events.KindDecide, p.decideEvents(nil)...)
	exact, err := encodedSize(&c)
	if err != nil {
		return fmt.Errorf("step %d: %w: %w", p.step, ErrInvalidRequest, err)
	}
	if one {
		exact += settle
	}
	if exact > budget {
		return fmt.Errorf("step %d: its %d calls' arguments and permission requests take %d bytes, more than the %d bytes a commit holds: %w",
			p.step, len(p.calls), exact, budget, ErrInvalidRequest)
	}
	return nil
}
