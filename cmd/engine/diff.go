package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection"
	"github.com/stepgate/stepgate/replay"
)

// errRunsDiffer is diff's answer when the runs differ: exit status 1.
type errRunsDiffer struct{ a, b string }

func (e errRunsDiffer) Error() string { return fmt.Sprintf("runs %s and %s differ", e.a, e.b) }

// runDiff is `engine diff RUN_A RUN_B`: the two runs aligned step by step,
// the first divergence and a summary of the rest. Exit status 0 when the
// runs' steps are equal, 1 when they differ.
func runDiff(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("diff", stderr)
	var cf connFlags
	cf.registerClient(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return usageError{"engine diff: want two run ids"}
	}
	return cf.with(ctx, stderr, func(api engineAPI) error {
		var runs [2]*projection.Run
		for i, id := range fs.Args() {
			r, err := api.Show(ctx, commands.ShowRequest{Run: id})
			if err != nil {
				return err
			}
			runs[i] = foldRun(r)
		}
		d := replay.DiffRuns(runs[0], runs[1])
		if *asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			if err := enc.Encode(d); err != nil {
				return err
			}
		} else {
			printDiff(stdout, d, len(runs[0].Steps), len(runs[1].Steps))
		}
		if !d.Same() {
			return errRunsDiffer{d.A, d.B}
		}
		return nil
	})
}

// printDiff prints a diff for a person.
func printDiff(w io.Writer, d *replay.Diff, stepsA, stepsB int) {
	fmt.Fprintf(w, "A  %s  %d steps\nB  %s  %d steps\n", d.A, stepsA, d.B, stepsB)
	if d.Same() {
		fmt.Fprintf(w, "no divergence: %d steps, all equal\n", d.Compared)
		return
	}
	f := d.First
	switch f.Kind {
	case replay.DiffOnlyA, replay.DiffOnlyB:
		fmt.Fprintf(w, "first divergence: step %d is only in %s\n", f.Step, strings.ToUpper(string(f.Kind[len(f.Kind)-1])))
	default:
		fmt.Fprintf(w, "first divergence: step %d, call %d: another %s\n", f.Step, f.Call, f.Kind)
	}
	for _, s := range [2][2]string{{"A", f.A}, {"B", f.B}} {
		if s[1] == "" {
			s[1] = "(none)"
		}
		fmt.Fprintf(w, "  %s: %s\n", s[0], s[1])
	}
	var kinds []string
	for _, k := range slices.Sorted(maps.Keys(d.Differ)) {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, d.Differ[k]))
	}
	differ := d.Compared - d.Equal
	fmt.Fprintf(w, "compared %d steps: %d equal, %d differ", d.Compared, d.Equal, differ)
	if len(kinds) > 0 {
		fmt.Fprintf(w, " (%s)", strings.Join(kinds, ", "))
	}
	fmt.Fprintf(w, "; %d only in A, %d only in B\n", d.OnlyA, d.OnlyB)
}

// foldRun is a run of the wire contract as the projection's value: the
// inverse of commands.WireRun, sharing r's events and raw JSON.
func foldRun(r *sgclient.Run) *projection.Run {
	out := &projection.Run{ID: r.ID, Snapshot: r.Snapshot, Status: projection.Status(r.Status), End: r.End, Catalog: r.Catalog,
		State: r.State, LastSeq: r.LastSeq, Commits: r.Commits, LastCommit: r.LastCommit}
	out.Steps = make([]projection.Step, len(r.Steps))
	for i, s := range r.Steps {
		ps := projection.Step{N: s.N, Final: s.Final, Host: s.Host, Calls: make([]projection.Call, len(s.Calls))}
		for j, c := range s.Calls {
			ps.Calls[j] = projection.Call(c)
		}
		out.Steps[i] = ps
	}
	for _, t := range r.Tickets {
		out.Tickets = append(out.Tickets, projection.Ticket{TicketIssued: events.TicketIssued(t.TicketIssued), Step: t.Step, Resolution: t.Resolution})
	}
	if r.Diverged != nil {
		dv := projection.Divergence(*r.Diverged)
		out.Diverged = &dv
	}
	return out
}
