package render

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"

	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection"
	"github.com/stepgate/stepgate/replay"
)

// AtView is what `engine show RUN --at STEP` tells (and prints as JSON):
// every projection as it stood after the step, folded from the log.
type AtView struct {
	Run  string `json:"run"`
	Step int    `json:"step"`
	// Seq is the stream sequence of the step's last commit: everything
	// below is folded from sequence 1 to it.
	Seq uint64 `json:"seq"`
	// State is the run then: its steps 1..Step.
	State *sgclient.Run `json:"state"`
	// Project is the run's project; Grants its grants in force then, and
	// Revoked those revoked by then.
	Project string    `json:"project"`
	Grants  []AtGrant `json:"grants"`
	Revoked []AtGrant `json:"revoked,omitempty"`
	// Registry is the location layer's registration in force for each
	// name; Scopes the whole layer, by scope.
	Registry map[string]projection.Registration `json:"registry"`
	Scopes   projection.Registry                `json:"scopes"`
	// Outputs are the output files kept then, by path.
	Outputs []events.OutputFileStored `json:"outputs"`
	// Quarantined counts the messages no fold applied by then.
	Quarantined uint64 `json:"quarantined"`
}

// AtGrant is a saved grant and where in the log it was saved (and revoked).
type AtGrant struct {
	projection.Grant
	projection.GrantTimes
}

// ViewAt gathers what `engine show --at` shows from a rebuild of the log
// to a step.
func ViewAt(at *replay.At) *AtView {
	b := at.Projections
	r := b.Runs[at.Run]
	v := &AtView{Run: at.Run, Step: at.Step, Seq: b.Seq, State: commands.WireRun(r), Project: r.Snapshot.Project,
		Grants: []AtGrant{}, Registry: b.Registry.Effective(), Scopes: b.Registry, Outputs: []events.OutputFileStored{},
		Quarantined: b.Quarantine.Total}
	for _, g := range b.ActiveAt(v.Project) {
		v.Grants = append(v.Grants, AtGrant{g, b.GrantLog[g.ID]})
	}
	for _, id := range slices.Sorted(maps.Keys(b.Grants)) {
		if g := b.Grants[id]; g.Project == v.Project && g.Revoked != nil {
			v.Revoked = append(v.Revoked, AtGrant{*g, b.GrantLog[id]})
		}
	}
	for _, path := range slices.Sorted(maps.Keys(b.Outputs)) {
		v.Outputs = append(v.Outputs, b.Outputs[path])
	}
	return v
}

// PrintAt prints time-travel view v for a person: the run's steps in
// show's timeline (without the log's times, which a rebuild does not keep
// per call), then the other projections.
func PrintAt(w io.Writer, v *AtView, pal Palette) {
	fmt.Fprintf(w, "as of step %d of run %s (stream sequence %d): folded from the log, nothing executed\n\n", v.Step, v.Run, v.Seq)
	Timeline(w, BuildShow(v.State, nil, nil), pal)
	fmt.Fprintf(w, "\ngrants in force in project %s: %d\n", v.Project, len(v.Grants))
	for _, g := range v.Grants {
		fmt.Fprintf(w, "  %s  %s %q  saved by %s at %s (stream sequence %d, ticket %s)\n", g.ID, g.Action, g.Resource,
			orNone(g.Principal), g.SavedAt.UTC().Format("2006-01-02T15:04:05Z"), g.SavedSeq, orNone(g.Ticket))
	}
	if len(v.Revoked) > 0 {
		fmt.Fprintf(w, "grants revoked by then: %d\n", len(v.Revoked))
		for _, g := range v.Revoked {
			fmt.Fprintf(w, "  %s  %s %q  revoked by %s at %s (stream sequence %d)\n", g.ID, g.Action, g.Resource,
				orNone(g.Revoked.Principal), g.RevokedAt.UTC().Format("2006-01-02T15:04:05Z"), g.RevokedSeq)
		}
	}
	fmt.Fprintf(w, "registry: %d names in force\n", len(v.Registry))
	regs := slices.SortedFunc(maps.Values(v.Registry), func(a, b projection.Registration) int { return cmp.Compare(a.Name, b.Name) })
	for _, r := range regs {
		fmt.Fprintf(w, "  %s  scope %s  (stream sequence %d)\n", r.Name, r.Scope, r.Seq)
	}
	fmt.Fprintf(w, "output files kept: %d\n", len(v.Outputs))
	for _, o := range v.Outputs {
		fmt.Fprintf(w, "  %s  %d bytes  sha256 %s  expires %s\n", o.Path, o.Bytes, o.SHA256, o.Expires.UTC().Format("2006-01-02T15:04:05Z"))
	}
	if v.Quarantined > 0 {
		fmt.Fprintf(w, "quarantined by then: %d messages (see engine quarantine)\n", v.Quarantined)
	}
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
