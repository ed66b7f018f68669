package commands

import (
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor"
)

// recordSeen records with the verdict v what the prepared call saw when it
// was decided: its observed value (edit: the file's digest the approver is
// shown) and the real path each of its paths resolved to (the directory an
// external_directory approval names). Both travel in the decide commit, so
// a host that resumes the ticket holds the call to them.
func recordSeen(v *events.PermissionDecided, p *executor.Prepared) {
	v.Observed = p.Observed()
	v.Paths = nil
	for _, r := range p.Paths() {
		v.Paths = append(v.Paths, events.ResolvedPath{Path: r.Path, Real: r.Real})
	}
}

// seenAtDecision hands what was recorded with the decision d back to call,
// so an approved or recovered call runs against what the human approved,
// not what is there now: edit compares the digest, every path tool the real
// paths (see executor.Call.Resolve). A decision recorded before paths were
// (no paths) leaves them to be recorded afresh, unchecked.
func seenAtDecision(call *executor.Call, d *events.PermissionDecided) {
	if d == nil {
		return
	}
	call.Observed = d.Observed
	for _, r := range d.Paths {
		call.Paths = append(call.Paths, executor.ResolvedPath{Path: r.Path, Real: r.Real})
	}
}
