package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"

	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection"
	"github.com/stepgate/stepgate/replay"
	"github.com/stepgate/stepgate/step"
)

// atView is `engine show RUN --at STEP`: every projection as it stood after
// the step, folded from the log.
type atView struct {
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
	Grants  []atGrant `json:"grants"`
	Revoked []atGrant `json:"revoked,omitempty"`
	// Registry is the location layer's registration in force for each
	// name; Scopes the whole layer, by scope.
	Registry map[string]projection.Registration `json:"registry"`
	Scopes   projection.Registry                `json:"scopes"`
	// Outputs are the output files kept then, by path.
	Outputs []events.OutputFileStored `json:"outputs"`
	// Quarantined counts the messages no fold applied by then.
	Quarantined uint64 `json:"quarantined"`
}

// atGrant is a saved grant and where in the log it was saved (and revoked).
type atGrant struct {
	projection.Grant
	projection.GrantTimes
}

// flagGiven reports whether the flag name was given on the command line.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// showAt is `engine show RUN --at STEP`. With --data it reads the embedded
// server's stream; with --nats it reads the stream with the user's NATS
// credentials (they need read access to it: see logReader).
func showAt(ctx context.Context, cf *connFlags, run string, n int, asJSON bool, pal palette, stdout, stderr io.Writer) error {
	if n < 1 {
		return usageError{"engine show: --at wants a step number from 1"}
	}
	var at *replay.At
	err := cf.withLogReader(ctx, step.DefaultStream, func(r logReader) (err error) {
		at, err = replay.ToStep(ctx, r, run, n)
		return err
	})
	if err != nil {
		return err
	}
	v := viewAt(at)
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	printAt(stdout, v, pal)
	return nil
}

// viewAt gathers what `show --at` shows from a rebuild.
func viewAt(at *replay.At) *atView {
	b := at.Projections
	r := b.Runs[at.Run]
	v := &atView{Run: at.Run, Step: at.Step, Seq: b.Seq, State: commands.WireRun(r), Project: r.Snapshot.Project,
		Grants: []atGrant{}, Registry: b.Registry.Effective(), Scopes: b.Registry, Outputs: []events.OutputFileStored{},
		Quarantined: b.Quarantine.Total}
	for _, g := range b.ActiveAt(v.Project) {
		v.Grants = append(v.Grants, atGrant{g, b.GrantLog[g.ID]})
	}
	for _, id := range slices.Sorted(maps.Keys(b.Grants)) {
		if g := b.Grants[id]; g.Project == v.Project && g.Revoked != nil {
			v.Revoked = append(v.Revoked, atGrant{*g, b.GrantLog[id]})
		}
	}
	for _, path := range slices.Sorted(maps.Keys(b.Outputs)) {
		v.Outputs = append(v.Outputs, b.Outputs[path])
	}
	return v
}

// printAt prints a time-travel view for a person: the run's steps in
// show's timeline (without the log's times, which a rebuild does not keep
// per call), then the other projections.
func printAt(w io.Writer, v *atView, pal palette) {
	fmt.Fprintf(w, "as of step %d of run %s (stream sequence %d): folded from the log, nothing executed\n\n", v.Step, v.Run, v.Seq)
	timeline(w, buildShow(v.State, nil, nil), pal)
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
