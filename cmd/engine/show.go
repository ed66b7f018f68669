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
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError{"engine show: want exactly one run id"}
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
