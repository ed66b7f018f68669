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
	cf.register(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError{"engine show: want exactly one run id"}
	}
	b, err := cf.open(ctx, logger(stderr))
	if err != nil {
		return err
	}
	defer b.close()
	r, err := b.api.Show(ctx, commands.ShowRequest{Run: fs.Arg(0)})
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
}
