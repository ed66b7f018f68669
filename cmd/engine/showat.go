package main

import (
	"context"
	"encoding/json"
	"flag"
	"io"

	"github.com/stepgate/stepgate/cmd/engine/render"
	"github.com/stepgate/stepgate/replay"
	"github.com/stepgate/stepgate/step"
)

// flagGiven reports whether the flag name was given on the command line.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// showAt is `engine show RUN --at STEP`. With --data it reads the embedded
// server's stream; with --nats it reads the stream with the user's NATS
// credentials (they need read access to it: see logReader).
func showAt(ctx context.Context, cf *connFlags, run string, n int, asJSON bool, pal render.Palette, stdout, stderr io.Writer) error {
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
	v := render.ViewAt(at)
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	render.PrintAt(stdout, v, pal)
	return nil
}
