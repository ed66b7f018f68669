package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
)

// runRuns is `engine runs`: every run the engine knows.
func runRuns(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("runs", stderr)
	var cf connFlags
	cf.registerClient(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	return cf.with(ctx, stderr, func(api engineAPI) error {
		runs, err := api.Runs(ctx)
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(stdout).Encode(runs)
		}
		for _, r := range runs {
			status := string(r.Status)
			if r.Cause != "" {
				status += " (" + r.Cause + ")"
			}
			if r.Diverged {
				status += " DIVERGED"
			}
			fmt.Fprintf(stdout, "%s  %-8s %-20s %d steps\n", r.ID, r.Agent, status, r.Steps)
		}
		return nil
	})
}
