package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/stepgate/stepgate/cmd/engine/render"
)

// runReport is `engine report RUN -o FILE.html`: the run `engine show`
// tells, as one self-contained HTML page (no external assets, no script, a
// Content-Security-Policy that forbids loading anything): the timeline, a
// per-step chart of the calls over time coloured by verdict, the tickets'
// waiting times and each call's arguments and result, collapsed.
func runReport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("report", stderr)
	var cf connFlags
	cf.registerClient(fs)
	out := fs.String("o", "", "the HTML file to write (required)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError{"engine report: want exactly one run id"}
	}
	if *out == "" {
		return usageError{"engine report: -o FILE.html is required"}
	}
	return cf.with(ctx, stderr, func(api engineAPI) error {
		d, err := showRun(ctx, api, fs.Arg(0))
		if err != nil {
			return err
		}
		if err := writeReport(*out, d); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s (%d steps)\n", *out, len(d.Timeline.Steps))
		return nil
	})
}

// writeReport renders d into path, whole or not at all: the page is
// written beside it and renamed over it.
func writeReport(path string, d *render.Show) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".report-*.html")
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := render.Report(tmp, d); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("report: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}
