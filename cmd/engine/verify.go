package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/cmd/engine/hosting"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/projection"
)

// runVerify is `engine verify --data DIR`: rebuild every projection (runs,
// registry, grants, output files, the runs a recovery looks at, the
// quarantine) from stream sequence 1 and compare each with the one loaded
// from the checkpoint (and its replayed tail). Quarantined messages are
// listed first, then every run whose hash chain broke (in the rebuild or in
// the checkpoint); then each projection is compared, and each that differs
// is named with its difference. A broken chain fails, and so does any
// difference (a bug). On a terminal a progress bar shows the rebuild of a
// long stream. It opens the data directory itself, so no engine may be
// serving it.
func runVerify(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("verify", stderr)
	data := fs.String("data", defaultData, "the data directory to verify (stop the engine serving it first)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usageError{"engine verify: takes no arguments"}
	}
	if err := (&connFlags{data: *data, fs: fs}).requireEngine(); err != nil {
		return err // nothing to verify, and no data directory made to verify it
	}
	// A name of its own, not the directory's: verify settles nothing a
	// killed host left in doubt (a restart of that host does).
	e, err := startEmbedded(ctx, hosting.Options{DataDir: *data, HostName: fmt.Sprintf("verify-%d", os.Getpid()), Log: logger(stderr),
		Lease: commands.LeaseConfig{Off: true}}) // it runs nothing: no lease to leave behind
	if err != nil {
		return err
	}
	defer e.Close()
	got, err := e.Host.Proj.Projections()
	if err != nil {
		return err
	}
	seq := got.Seq
	bar := newProgressBar(stderr, "verify: rebuilding", seq)
	want, err := projection.Rebuild(ctx, e.Host.Log, seq, projection.WithProgress(bar.at))
	bar.done()
	if err != nil {
		return err
	}
	printQuarantine(stdout, want.Quarantine)
	failed := printDiverged(stdout, want.Runs, got.Runs)
	var differ []string
	for _, p := range compared(want, got) {
		if diff := cmp.Diff(p.rebuilt, p.checkpoint); diff != "" {
			fmt.Fprintf(stdout, "%s differ from a rebuild at stream sequence %d (-rebuild +checkpoint):\n%s", p.name, seq, diff)
			differ = append(differ, p.name)
		}
	}
	if len(differ) > 0 {
		return fmt.Errorf("verify: the checkpointed projection is not the log's: %s differ", joinNames(differ))
	}
	if failed {
		return fmt.Errorf("verify: a run's chain is broken")
	}
	fmt.Fprintf(stdout, "verified %d runs, %d grants, %d registry scopes, %d output files at stream sequence %d: every checkpointed projection equals a rebuild from sequence 1\n",
		len(got.Runs), len(got.Grants), len(got.Registry), len(got.Outputs), seq)
	return nil
}

// aProjection is one projection verify compares: its name in the report,
// as rebuilt and as checkpointed.
type aProjection struct {
	name                string
	rebuilt, checkpoint any
}

// compared is every projection verify compares, in report order.
func compared(want, got *projection.Rebuilt) []aProjection {
	return []aProjection{
		{"the runs", want.Runs, got.Runs},
		{"the registry's scopes", want.Registry, got.Registry},
		{"the saved grants", want.Grants, got.Grants},
		{"the output files", want.Outputs, got.Outputs},
		{"the runs with a step left open", want.Open, got.Open},
		{"the quarantine's messages", want.Quarantine, got.Quarantine},
	}
}

// joinNames is names as a sentence's list.
func joinNames(names []string) string {
	switch len(names) {
	case 1:
		return names[0]
	case 2:
		return names[0] + " and " + names[1]
	}
	out := ""
	for i, n := range names {
		switch {
		case i == len(names)-1:
			out += ", and " + n
		case i > 0:
			out += ", " + n
		default:
			out = n
		}
	}
	return out
}

// printDiverged lists the runs whose chain broke: in the rebuild (the stream
// itself shows a lost write), or only in the checkpoint (this host folded a
// write the stream no longer holds). It reports whether there were any.
func printDiverged(w io.Writer, rebuilt, checkpoint map[string]*projection.Run) bool {
	ids := slices.Sorted(maps.Keys(rebuilt))
	for id := range checkpoint {
		if _, ok := rebuilt[id]; !ok {
			ids = append(ids, id)
		}
	}
	n := 0
	for _, id := range ids {
		r, c := rebuilt[id], checkpoint[id]
		switch {
		case r != nil && r.Diverged != nil:
			fmt.Fprintf(w, "run %s diverged: %s\n", id, r.Diverged)
		case c != nil && c.Diverged != nil:
			fmt.Fprintf(w, "run %s diverged here, not in the log (the log lost a write this host had folded): %s\n", id, c.Diverged)
		default:
			continue
		}
		n++
	}
	if n > 0 {
		fmt.Fprintf(w, "%d runs diverged: each takes no more steps\n", n)
	}
	return n > 0
}
