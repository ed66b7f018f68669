package main

import (
	"context"
	"fmt"
	"io"

	"github.com/stepgate/stepgate/cmd/engine/render"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
)

// endCauses are the causes engine end accepts: the end_run endpoint's.
var endCauses = []string{events.CauseCancelled, events.CauseCompleted, events.CauseDeclined, events.CauseFailed}

// runEnd is `engine end RUN [--cause CAUSE] [--reason TEXT]`: it ends a
// run through the end_run endpoint, as the client that started it would
// (a run started without --wait, or whose client is gone, stays open
// otherwise). Its tickets still pending are answered by nobody; a run
// that has ended already is an error.
func runEnd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("end", stderr)
	var cf connFlags
	cf.registerClient(fs)
	cause := fs.String("cause", events.CauseCancelled, "why the run ended: cancelled, completed, declined or failed")
	reason := fs.String("reason", "", "a note recorded with the end (who ended it and why)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError{"engine end: want exactly one run id"}
	}
	known := false
	for _, c := range endCauses {
		known = known || c == *cause
	}
	if !known {
		return usageError{fmt.Sprintf("engine end: --cause %q: want cancelled, completed, declined or failed", *cause)}
	}
	return cf.with(ctx, stderr, func(api engineAPI) error {
		sum, err := api.EndRun(ctx, commands.EndRunRequest{Run: fs.Arg(0), Cause: *cause, Reason: *reason})
		if err != nil {
			return err
		}
		render.NewPrinter(stdout, false).Ended(sum)
		return nil
	})
}
