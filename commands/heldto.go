package commands

import (
	"slices"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/projection"
)

// A call that waited (approved, or recovered) runs against what it observed
// when it was decided (executor.Call.Observed; edit: the file's digest), so
// a change by anyone else refuses it. Other calls of its own step may have
// run meanwhile, each approved by its own reply: their changes are the
// run's, and the call is held to what they left instead. Exactly this is
// accepted: the value the call observed, carried forward through calls of
// its step that succeeded, resolved a real path in common with it, and
// recorded what they found and left (events.ToolResultRecorded's Found and
// Left): each link is a call that found the value the chain had reached
// and left the next one. The tool then compares the end of the chain with
// the world as before. A change by anyone else — before, between or after
// those calls — leaves the file at a value no link found or left, and the
// call is refused as it was; a chain that cannot be followed from the
// recorded value holds the call to that value, unchanged.

// heldTo is what call c of step s, handed paths and observed value
// observed (what was recorded when it was decided), is held to: observed
// carried through the step's calls that ran since on one of its paths (see
// above). r holds the tickets whose resolutions name an edited call's
// paths.
func heldTo(r *projection.RunHeader, s *projection.Step, c *projection.Call, paths []executor.ResolvedPath, observed string) string {
	if observed == "" || s == nil || len(paths) == 0 {
		return observed
	}
	var links []*events.ToolResultRecorded
	for i := range s.Calls {
		o := &s.Calls[i]
		if o.ID == c.ID || o.Result == nil || o.Result.IsError || o.Result.Found == "" || o.Result.Left == "" {
			continue
		}
		if shareReal(paths, ranOn(r, o)) {
			links = append(links, o.Result)
		}
	}
	for { // each link once: a chain that comes back to a value goes on only through other links
		i := slices.IndexFunc(links, func(l *events.ToolResultRecorded) bool { return l != nil && l.Found == observed })
		if i < 0 {
			return observed
		}
		observed, links[i] = links[i].Left, nil
	}
}

// ranOn is the real paths call o ran on: those its approver's edit of the
// arguments resolved, if its ticket was answered with one, else those of
// its decision.
func ranOn(r *projection.RunHeader, o *projection.Call) []events.ResolvedPath {
	if res := resolutionOf(r, o); res != nil && res.Edit != nil {
		return res.Edit.Paths
	}
	if o.Decision == nil {
		return nil
	}
	return o.Decision.Paths
}

// shareReal reports whether a and b hold a real path in common.
func shareReal(a []executor.ResolvedPath, b []events.ResolvedPath) bool {
	for _, x := range a {
		for _, y := range b {
			if x.Real == y.Real {
				return true
			}
		}
	}
	return false
}
