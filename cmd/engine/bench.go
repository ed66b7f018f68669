package main

import (
	"cmp"
	"context"
	"io"
	"os"
	"runtime/pprof"
	"strings"

	"github.com/stepgate/stepgate/bench"
	"github.com/stepgate/stepgate/step"
)

// runBench is `engine bench <workload|all>`: one JSON line per workload on
// stdout, a human summary on stderr.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench", stderr)
	sync := fs.String("sync", step.SyncInterval, "storage sync: interval or always")
	quick := fs.Bool("quick", false, "reduced size, for CI")
	_ = fs.Bool("json", true, "print JSON lines (always on; the summary goes to stderr)")
	dir := fs.String("dir", "", "where temporary data directories are made (default: the system's temporary directory, $TMPDIR or /tmp)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole bench to this file")
	if err := parse(fs, args); err != nil {
		return err
	}
	names := fs.Args()
	if len(names) == 0 {
		return usageError{"engine bench: name a workload (" + strings.Join(bench.Workloads(), ", ") + ") or all"}
	}
	if len(names) == 1 && names[0] == "all" {
		names = bench.Workloads()
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	for _, w := range names {
		o := bench.Options{Workload: w, Sync: *sync, Quick: *quick, Dir: cmp.Or(*dir, os.TempDir()), Stderr: stderr}
		if err := o.Validate(); err != nil {
			return usageError{err.Error()}
		}
		if _, err := bench.Run(ctx, o, stdout); err != nil {
			return err
		}
	}
	return nil
}
