package main

import (
	"context"
	"fmt"
	"io"
)

// runSweep is `engine sweep`: delete expired output files now (with --nats,
// on the host that answers).
func runSweep(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("sweep", stderr)
	var cf connFlags
	cf.registerClient(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usageError{"engine sweep: takes no arguments"}
	}
	return cf.with(ctx, stderr, func(api engineAPI) error {
		res, err := api.SweepOutputs(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "swept %d output files from %s\n", len(res.Deleted), res.Dir)
		for _, p := range res.Deleted {
			fmt.Fprintln(stdout, "  "+p)
		}
		return nil
	})
}
