package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/cmd/engine/render"
)

// runShow is `engine show RUN`: one run in full, as a timeline a person
// reads (coloured on a terminal) or, with --json, as a [render.Show].
func runShow(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("show", stderr)
	var cf connFlags
	cf.registerClient(fs)
	asJSON := fs.Bool("json", false, "print JSON: the run and its timeline")
	color := fs.String("color", "auto", "colour the timeline: auto (on a terminal), always or never")
	at := fs.Int("at", 0, "time travel: every projection (the run, its project's grants, the registry, output files) as it stood after this step, folded from the log")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError{"engine show: want exactly one run id"}
	}
	pal, err := colorFor(*color, stdout)
	if err != nil {
		return err
	}
	if flagGiven(fs, "at") {
		return showAt(ctx, &cf, fs.Arg(0), *at, *asJSON, pal, stdout, stderr)
	}
	return cf.with(ctx, stderr, func(api engineAPI) error {
		d, err := showRun(ctx, api, fs.Arg(0))
		if err != nil {
			return err
		}
		if *asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(d)
		}
		render.Timeline(stdout, d, pal)
		return nil
	})
}

// showRun gathers what show tells of run: the run and what its commits
// say beyond it (the run_facts endpoint: times, spilled-file sizes, the
// state each call set, the saved grants its verdicts name).
func showRun(ctx context.Context, api engineAPI, run string) (*render.Show, error) {
	r, err := api.Show(ctx, sgclient.ShowRequest{Run: run})
	if err != nil {
		return nil, err
	}
	rf, err := api.RunFacts(ctx, sgclient.RunFactsRequest{Run: run})
	if err != nil {
		return nil, fmt.Errorf("show %s: what its commits say: %w", run, err)
	}
	return render.BuildShow(r, rf.Grants, render.IndexFacts(rf)), nil
}

// colorFor is the palette --color asks for on out: auto colours only a
// terminal (a character device).
func colorFor(mode string, out io.Writer) (render.Palette, error) {
	switch mode {
	case "always":
		return render.Palette{On: true}, nil
	case "never":
		return render.Palette{}, nil
	case "auto":
		f, ok := out.(*os.File)
		if !ok {
			return render.Palette{}, nil
		}
		st, err := f.Stat()
		return render.Palette{On: err == nil && st.Mode()&os.ModeCharDevice != 0}, nil
	}
	return render.Palette{}, usageError{fmt.Sprintf("engine show: --color %q: want auto, always or never", mode)}
}
