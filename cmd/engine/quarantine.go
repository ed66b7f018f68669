package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/projection"
)

// runQuarantine is `engine quarantine`: the messages of the log that every
// fold skipped, with their sequence, subject and reason.
func runQuarantine(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("quarantine", stderr)
	var cf connFlags
	cf.registerClient(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usageError{"engine quarantine: takes no arguments"}
	}
	return cf.with(ctx, stderr, func(api engineAPI) error {
		l, err := api.Quarantine(ctx, commands.QuarantineRequest{})
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(stdout).Encode(l)
		}
		q := projection.Quarantine{Total: l.Total, Recent: make([]projection.Quarantined, len(l.Messages))}
		for i, m := range l.Messages {
			q.Recent[i] = projection.Quarantined(m)
		}
		printQuarantine(stdout, q)
		return nil
	})
}

// printQuarantine lists quarantined messages, one a line.
func printQuarantine(w io.Writer, q projection.Quarantine) {
	if q.Total == 0 {
		fmt.Fprintln(w, "no message is quarantined")
		return
	}
	fmt.Fprintf(w, "%d messages quarantined (the latest %d listed):\n", q.Total, len(q.Recent))
	for _, m := range q.Recent {
		fmt.Fprintf(w, "  seq %d  %s  %s\n", m.Seq, m.Subject, m.Reason)
	}
}
