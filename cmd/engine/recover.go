package main

import (
	"context"
	"fmt"
	"io"

	"github.com/stepgate/stepgate/commands"
)

// runRecover is `engine recover HOST`: settle, on the engine that answers,
// the steps the named host left open when it went away for good — as that
// host would have on its own restart.
func runRecover(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("recover", stderr)
	var cf connFlags
	cf.registerClient(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError{"engine recover: name the host that is gone (engine recover HOST)"}
	}
	host := fs.Arg(0)
	return cf.with(ctx, stderr, func(api engineAPI) error {
		res, err := api.RecoverHost(ctx, commands.RecoverRequest{Host: host})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "settled %d steps left open by %s\n", len(res.Steps), res.Host)
		for _, s := range res.Steps {
			fmt.Fprintf(stdout, "  %s step %d\n", s.Run, s.Step)
		}
		return nil
	})
}
