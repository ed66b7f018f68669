package fold

import (
	"strings"

	"github.com/stepgate/stepgate/events"
)

// NotRunPrefix begins the result the engine records for an allowed call
// that it settled without starting it: its host lost its lease before the
// call started (commands.LeaseLostResult), or the request ended while the
// call waited for an execution slot. Such a result sits in a settle commit
// like the result of a call that ran, so its text is the only mark of it.
const NotRunPrefix = "The call did not run: "

// executedIn is the host that ran the calls whose results commit c records
// — the rule of [Call.RanOn] for the commit — or "" when a result recorded
// there is not one of a call that ran. Results of calls that ran are
// recorded in two kinds of commit only: a settle commit, which follows the
// execution of the calls an earlier commit of the step let start (the
// decide commit, a resolve commit that approved them, a recover commit that
// runs them again), and a one-commit step, whose calls ran before it was
// made. A fork's copy of a source step is a one-commit step too, but its
// calls ran in the source run, not on the host that made the copy. Every
// other kind (resolve, recover, end) records results of calls that did not
// run: a rejection, an expired or stale ticket, the recovery's
// indeterminate result.
func executedIn(c *events.Commit) string {
	if c.Kind != events.KindSettle && c.Kind != events.KindStep {
		return ""
	}
	for _, e := range c.Events {
		if _, ok := e.(events.StepCopied); ok {
			return ""
		}
	}
	return c.Host
}

// ranOn is the [Call.RanOn] of call once res, recorded in a commit whose
// executedIn is host, is its result.
func (r *Run) ranOn(call *Call, res *events.ToolResultRecorded, host string) string {
	if host == "" || !r.cleared(call) || notRun(res) {
		return ""
	}
	return host
}

// cleared reports whether call was let run: allowed without a ticket, or
// its ticket approved (a permission ticket, or an input ticket answered).
func (r *Run) cleared(call *Call) bool {
	if call.Ticket != "" {
		t := r.Ticket(call.Ticket)
		return t != nil && t.Resolution != nil && t.Resolution.Approved
	}
	return call.Decision != nil && call.Decision.Verdict == events.VerdictAllow
}

// notRun reports whether res says its call did not run (see NotRunPrefix):
// an error whose last part is that text (an edited call's note comes
// before it), with nothing else a tool would return.
func notRun(res *events.ToolResultRecorded) bool {
	if !res.IsError || len(res.Parts) == 0 || len(res.Files) > 0 || len(res.Structured) > 0 {
		return false
	}
	last := res.Parts[len(res.Parts)-1]
	return last.Type == "text" && strings.HasPrefix(last.Text, NotRunPrefix)
}
