package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	sgclient "github.com/stepgate/stepgate/client"
)

// runRuns is `engine runs`: the runs the engine knows, a page at a time
// (the first page holds DefaultRunsLimit; --cursor goes on).
func runRuns(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("runs", stderr)
	var cf connFlags
	cf.registerClient(fs)
	asJSON := fs.Bool("json", false, "print JSON (the page's runs; the next page's cursor goes to stderr)")
	limit := fs.Int("limit", sgclient.DefaultRunsLimit, fmt.Sprintf("the most runs listed (at most %d)", sgclient.MaxRunsLimit))
	cursor := fs.String("cursor", "", "go on after a previous page (the cursor it printed)")
	if err := parse(fs, args); err != nil {
		return err
	}
	return cf.with(ctx, stderr, func(api engineAPI) error {
		page, err := api.RunsPage(ctx, sgclient.RunsRequest{Limit: *limit, Cursor: *cursor})
		if err != nil {
			return err
		}
		more := func(w io.Writer) {
			if page.Next != "" {
				fmt.Fprintf(w, "(more runs follow: engine runs --cursor %s)\n", page.Next)
			}
		}
		if *asJSON {
			more(stderr)
			return json.NewEncoder(stdout).Encode(page.Runs)
		}
		for _, r := range page.Runs {
			status := r.Status
			if r.Cause != "" {
				status += " (" + r.Cause + ")"
			}
			if r.Diverged {
				status += " DIVERGED"
			}
			fmt.Fprintf(stdout, "%s  %-8s %-20s %d steps\n", r.ID, r.Agent, status, r.Steps)
		}
		more(stdout)
		return nil
	})
}
