package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	sgclient "github.com/stepgate/stepgate/client"
)

// runRuns is `engine runs`: the runs the engine knows, a page at a time
// (the first page holds DefaultRunsLimit; --cursor goes on). With --status
// or --idle it reads every page from --cursor on and lists the runs that
// match (engine runs --status running --idle 1h: the runs nobody ended).
func runRuns(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("runs", stderr)
	var cf connFlags
	cf.registerClient(fs)
	asJSON := fs.Bool("json", false, "print JSON (the page's runs; the next page's cursor goes to stderr)")
	limit := fs.Int("limit", sgclient.DefaultRunsLimit, fmt.Sprintf("the most runs listed (at most %d)", sgclient.MaxRunsLimit))
	cursor := fs.String("cursor", "", "go on after a previous page (the cursor it printed)")
	var f runFilter
	fs.StringVar(&f.status, "status", "", "only runs of this status: running, awaiting or ended (reads every page)")
	fs.DurationVar(&f.idle, "idle", 0, "only runs whose last commit is at least this old, e.g. 1h (reads every page)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usageError{"engine runs: takes no arguments"}
	}
	switch f.status {
	case "", sgclient.StatusRunning, sgclient.StatusAwaiting, sgclient.StatusEnded:
	default:
		return usageError{fmt.Sprintf("engine runs: --status %q: want running, awaiting or ended", f.status)}
	}
	if f.idle < 0 {
		return usageError{fmt.Sprintf("engine runs: --idle %s: want a positive duration", f.idle)}
	}
	return cf.with(ctx, stderr, func(api engineAPI) error {
		req := sgclient.RunsRequest{Limit: *limit, Cursor: *cursor}
		page, err := api.RunsPage(ctx, req)
		if err != nil {
			return err
		}
		if f.on() {
			now := time.Now()
			var runs []sgclient.RunSummary
			for {
				for _, r := range page.Runs {
					if f.match(r, now) {
						runs = append(runs, r)
					}
				}
				if page.Next == "" {
					break
				}
				req.Cursor = page.Next
				if page, err = api.RunsPage(ctx, req); err != nil {
					return err
				}
			}
			page = &sgclient.RunPage{Runs: runs}
			if runs == nil {
				page.Runs = []sgclient.RunSummary{}
			}
		}
		more := func(w io.Writer) {
			if page.Next != "" {
				fmt.Fprintf(w, "(more runs follow: engine runs --cursor %s%s)\n", page.Next, cf.hint())
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
			line := fmt.Sprintf("%s  %-8s %-20s %d steps", r.ID, r.Agent, status, r.Steps)
			if f.idle > 0 {
				line += "  " + lastCommit(r, time.Now())
			}
			fmt.Fprintln(stdout, line)
		}
		more(stdout)
		return nil
	})
}

// runFilter is what engine runs --status and --idle keep.
type runFilter struct {
	status string
	idle   time.Duration
}

func (f runFilter) on() bool { return f.status != "" || f.idle > 0 }

// match reports whether r passes the filter at now. A run whose last
// commit's time the host does not know (checkpointed before it kept it)
// counts as idle: the listing says so.
func (f runFilter) match(r sgclient.RunSummary, now time.Time) bool {
	if f.status != "" && r.Status != f.status {
		return false
	}
	if f.idle > 0 && !r.LastAt.IsZero() && now.Sub(r.LastAt) < f.idle {
		return false
	}
	return true
}

// lastCommit says how long ago r's last commit was made.
func lastCommit(r sgclient.RunSummary, now time.Time) string {
	if r.LastAt.IsZero() {
		return "last commit: time unknown (checkpointed by an older engine)"
	}
	return "last commit " + now.Sub(r.LastAt).Round(time.Second).String() + " ago"
}
