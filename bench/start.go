package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

// startRounds is how many times the start workload execs each binary (the
// median is reported); --quick: startQuickRounds.
const (
	startRounds      = 20
	startQuickRounds = 5
)

// runStart is the start workload: what a process start of the engine costs
// beside a bare Go binary's (`package main; func main(){}`) built by the
// bench, in the same run, with the go command on PATH.
//
// What is timed, for each binary alike: from the bench's exec (os/exec's
// Start, a fork and exec of an absolute path, stdin, stdout and stderr
// /dev/null) until its Wait returns, so the loader, the runtime's start, the
// package initialisation, main and the exit. The engine is run as `engine
// version`, which after main only prints one line (`engine help` where the
// binary has no version verb: the JSON line's `verb` says which), so the
// time after main is a small, fixed part of it; the bare binary's main is
// empty. The rounds alternate the two binaries (the bare one first in even
// rounds, the engine first in odd ones) after one untimed exec of each,
// which brings both into the page cache. Reported: each median in ms and
// start_ms ÷ bare_start_ms; beside them the median CPU time (user and
// system) of each process, which a busy machine moves less than the wall
// clock.
func runStart(ctx context.Context, o Options) (Result, error) {
	self, err := o.binary()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(o.Dir, "stepgate-bench-start-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bare, bareGo, err := buildBare(ctx, dir)
	if err != nil {
		return nil, err
	}
	verb, err := startVerb(ctx, self)
	if err != nil {
		return nil, err
	}
	if _, _, err := timeExec(ctx, bare); err != nil {
		return nil, err
	}
	rounds := startRounds
	if o.Quick {
		rounds = startQuickRounds
	}
	var engine, base, engineCPU, baseCPU []float64
	for i := range rounds {
		order := []bool{false, true} // false: the bare binary
		if i%2 == 1 {
			order = []bool{true, false}
		}
		for _, isEngine := range order {
			if isEngine {
				d, cpu, err := timeExec(ctx, self, verb)
				if err != nil {
					return nil, err
				}
				engine, engineCPU = append(engine, ms(d)), append(engineCPU, ms(cpu))
				continue
			}
			d, cpu, err := timeExec(ctx, bare)
			if err != nil {
				return nil, err
			}
			base, baseCPU = append(base, ms(d)), append(baseCPU, ms(cpu))
		}
	}
	r := newResult(o)
	r["verb"] = verb
	r["rounds"] = rounds
	r["start_ms"] = preciseMedian(engine)
	r["bare_start_ms"] = preciseMedian(base)
	r["ratio"] = ratio(preciseMedian(engine), preciseMedian(base))
	r["start_cpu_ms"] = preciseMedian(engineCPU)
	r["bare_start_cpu_ms"] = preciseMedian(baseCPU)
	r["start_ms_runs"] = engine
	r["bare_start_ms_runs"] = base
	r["go_version"] = runtime.Version()
	r["bare_go_version"] = bareGo
	if bareGo != runtime.Version() && o.Log != nil {
		o.Log.Warn("the bare binary was built by another Go than the bench's own", "bench", runtime.Version(), "bare", bareGo)
	}
	return r, nil
}

// preciseMedian is median without its rounding to whole units (a start
// is a few milliseconds).
func preciseMedian(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return math.Round((s[len(s)/2-1]+s[len(s)/2])/2*1000) / 1000
}

// timeExec runs bin with args, its standard streams /dev/null, and returns
// the time from the exec until its exit was collected, and the CPU time
// (user and system) the process used.
func timeExec(ctx context.Context, bin string, args ...string) (time.Duration, time.Duration, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	if err != nil {
		return 0, 0, fmt.Errorf("%s %s: %w", filepath.Base(bin), strings.Join(args, " "), err)
	}
	return d, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
}

// startVerb is the verb the start workload runs the engine with: version,
// or help for a binary that has no version verb (it exits 2, a usage error).
// The exec is also the engine's untimed first one.
func startVerb(ctx context.Context, self string) (string, error) {
	err := exec.CommandContext(ctx, self, "version").Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return "version", nil
	case errors.As(err, &exit) && exit.ExitCode() == 2:
		if err := exec.CommandContext(ctx, self, "help").Run(); err != nil {
			return "", fmt.Errorf("engine help: %w", err)
		}
		return "help", nil
	default:
		return "", fmt.Errorf("engine version: %w", err)
	}
}

// buildBare builds `package main; func main(){}` in dir with the go command
// on PATH (its own toolchain: GOTOOLCHAIN=local; no workspace, no GOFLAGS)
// and returns the binary's path and that Go's version.
func buildBare(ctx context.Context, dir string) (string, string, error) {
	src := filepath.Join(dir, "bare")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", "", err
	}
	files := map[string]string{
		"go.mod":  "module bare\n\ngo 1.21\n",
		"main.go": "package main\n\nfunc main() {}\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o644); err != nil {
			return "", "", err
		}
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return "", "", fmt.Errorf("the bare Go binary is built with the go command, and there is none on PATH: %w", err)
	}
	env := append(os.Environ(), "GOTOOLCHAIN=local", "GOWORK=off", "GOFLAGS=")
	run := func(args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, goCmd, args...)
		cmd.Dir, cmd.Env = src, env
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, errb.String())
		}
		return out.Bytes(), nil
	}
	bin := filepath.Join(dir, "bare-main")
	if _, err := run("build", "-o", bin, "."); err != nil {
		return "", "", err
	}
	v, err := run("env", "GOVERSION")
	if err != nil {
		return "", "", err
	}
	return bin, strings.TrimSpace(string(v)), nil
}
