package fold

import (
	"fmt"

	"github.com/stepgate/stepgate/events"
)

// Divergence is where a run's hash chain broke: a commit that the stream
// accepted (the CAS on the run's last subject sequence let it through) but
// that does not follow the commit this fold holds as the run's last. The
// history this fold saw lost a write, or the commit was built on a history
// that had. It is not a quarantine: the message is well formed; the run as
// a whole can no longer be trusted to have one history.
type Divergence struct {
	// Seq is the stream sequence of the commit that broke the chain.
	Seq uint64 `json:"seq"`
	// Commit is that commit's id, Step its step and Host its host.
	Commit string `json:"commit"`
	Step   int    `json:"step,omitempty"`
	Host   string `json:"host,omitempty"`
	// Want is the run's last commit as this fold holds it; Got is the
	// predecessor the commit named (empty: it named none).
	Want string `json:"want"`
	Got  string `json:"got"`
}

// String says what broke, for operators.
func (d *Divergence) String() string {
	got := d.Got
	if got == "" {
		got = "none"
	}
	return fmt.Sprintf("commit %s (stream sequence %d, step %d, host %q) names %s as its predecessor; the run's last commit is %s",
		d.Commit, d.Seq, d.Step, d.Host, got, d.Want)
}

// checkChain reports whether c follows the run's last commit. The rules,
// which keep logs and checkpoints written before the chain readable:
//   - a run's first commit follows nothing, whatever it names;
//   - a run checkpointed before the chain (no LastCommit) adopts the
//     predecessor its next commit names;
//   - a commit naming no predecessor was written by a build before the
//     chain (or by no engine): it is not checked, and folds or is
//     quarantined as every commit did before the chain — so a host of an
//     older build can still serve the run during an upgrade, and a message
//     no engine wrote never stops a run;
//   - the run's last commit stored again (a publish retried after the
//     de-duplication window) is not a break: it is quarantined as a
//     duplicate, as before;
//   - otherwise c must name the run's last commit.
//
// A break marks r diverged at seq; a run that diverged folds nothing more.
// Both return an error wrapping [ErrDiverged] and move r's last sequence
// past seq, so the error is never a quarantine.
func (r *Run) checkChain(seq uint64, c *events.Commit) error {
	if r.Diverged != nil {
		r.Skip(seq)
		return fmt.Errorf("run %s commit %s: %w at stream sequence %d", c.Run, c.ID, ErrDiverged, r.Diverged.Seq)
	}
	switch {
	case r.Status == "", r.LastCommit == "", c.Prev == "", c.Prev == r.LastCommit, c.ID == r.LastCommit:
		return nil
	}
	r.Diverged = &Divergence{Seq: seq, Commit: c.ID, Step: c.Step, Host: c.Host, Want: r.LastCommit, Got: c.Prev}
	r.Skip(seq)
	return fmt.Errorf("run %s: %w: %s", c.Run, ErrDiverged, r.Diverged)
}
