package main

import (
	"context"
	"encoding/json"
	"io"

	"github.com/stepgate/stepgate/commands"
)

// runShow is `engine show RUN`: one run in full.
func runShow(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("show", stderr)
	var cf connFlags
	cf.registerClient(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	at := fs.Int("at", 0, "time travel: every projection (the run, its project's grants, the registry, output files) as it stood after this step, folded from the log")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError{"engine show: want exactly one run id"}
	}
	if flagGiven(fs, "at") {
		return showAt(ctx, &cf, fs.Arg(0), *at, *asJSON, stdout, stderr)
	}
	return cf.with(ctx, stderr, func(api engineAPI) error {
		r, err := api.Show(ctx, commands.ShowRequest{Run: fs.Arg(0)})
		if err != nil {
			return err
		}
		if *asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(r)
		}
		timeline(stdout, r)
		return nil
	})
}
