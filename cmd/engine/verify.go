package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/projection"
)

// runVerify is `engine verify --data DIR`: rebuild the runs projection from
// stream sequence 1 and compare it with the one loaded from the checkpoint
// (and its replayed tail), and the messages both quarantined. Quarantined
// messages are listed first, then every run whose hash chain broke (in the
// rebuild or in the checkpoint); the rest is compared. A broken chain fails. Any difference is a bug;
// it is printed and the command fails. It opens the data directory itself, so no engine may be
// serving it.
func runVerify(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("verify", stderr)
	data := fs.String("data", defaultData, "the data directory to verify (stop the engine serving it first)")
	if err := parse(fs, args); err != nil {
		return err
	}
	// A name of its own, not the directory's: verify settles nothing a
	// killed host left in doubt (a restart of that host does).
	e, err := startEmbedded(ctx, hostOptions{dataDir: *data, hostName: fmt.Sprintf("verify-%d", os.Getpid()), log: logger(stderr),
		lease: commands.LeaseConfig{Off: true}}) // it runs nothing: no lease to leave behind
	if err != nil {
		return err
	}
	defer e.close()
	seq := e.host.Proj.Seq()
	got, err := e.host.Proj.All()
	if err != nil {
		return err
	}
	want, err := projection.Rebuild(ctx, e.host.Log, seq)
	if err != nil {
		return err
	}
	quarantine := e.host.Proj.Quarantine()
	printQuarantine(stdout, want.Quarantine)
	failed := printDiverged(stdout, want.Runs, got)
	if diff := cmp.Diff(want.Runs, got); diff != "" {
		fmt.Fprintf(stdout, "the projection differs from a rebuild at stream sequence %d (-rebuild +checkpoint):\n%s", seq, diff)
		failed = true
	}
	if diff := cmp.Diff(want.Quarantine, quarantine); diff != "" {
		fmt.Fprintf(stdout, "the quarantine differs from a rebuild's at stream sequence %d (-rebuild +checkpoint):\n%s", seq, diff)
		failed = true
	}
	if failed {
		return fmt.Errorf("verify: the checkpointed projection is not the log's, or a run's chain is broken")
	}
	fmt.Fprintf(stdout, "verified %d runs at stream sequence %d: the checkpointed projection equals a rebuild from sequence 1\n", len(got), seq)
	return nil
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
