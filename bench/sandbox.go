package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/sandbox"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/step"
)

// w7 is the cost of the sandbox on the step path: w7Steps steps of one
// `bash` call (`true`) on a host whose runs pin the profile off, then the
// same on a fresh host whose runs pin workspace-write (the host's floor,
// commands.Config.Sandbox), in one bench run. Keys:
//
//   - off_steps_per_s, sandboxed_steps_per_s: each half's steps per second;
//     steps_per_s is the sandboxed one (the workload's subject).
//   - sandbox_ratio: as bench/WORKLOADS.md defines it, the time per step
//     off ÷ the time per step sandboxed (= sandboxed_steps_per_s ÷
//     off_steps_per_s): 1 when the sandbox costs nothing, 0.5 at the
//     target (sandboxed ≤ 2 × off); sandbox_slowdown is its inverse, how
//     many times longer a sandboxed step takes.
//   - helper_start_ms: what the helper adds to a run's first sandboxed
//     command, when it starts (the steps run on a host's sandbox.Pool,
//     whose helper for a run's policy starts at its first call and serves
//     the next ones): the median of helperRuns first calls, each
//     sandbox.NewPool().Command(workspace-write, `true`).Run() on a new
//     pool, through the default helper (the one the steps used, named by
//     helper: stepgate-sandbox when that binary lies next to this one,
//     else engine, this binary re-executed), minus the median of the same
//     `true` run unsandboxed (off_exec_ms). It is also what a one-shot
//     sandbox.Command adds to every command (the network proxy's calls).
//     helper_self_start_ms is the same through this binary re-executed,
//     whichever the default. helper_warm_ms is what a warm helper adds to
//     each later command: the median of helperRuns calls on one pool after
//     its first, minus off_exec_ms.
const helperRuns = 20

// w7Warmup is the steps each half drives before its clock starts (fewer
// than the other workloads' warmup: a sandboxed step costs a process start).
const w7Warmup = 10

func runW7(ctx context.Context, o Options) (Result, error) {
	n := 200
	if o.Quick {
		n = 50
	}
	r := newResult(o)
	var rates [2]float64
	for i, mode := range []string{config.SandboxOff, config.SandboxWorkspaceWrite} {
		rate, err := w7Half(ctx, o, mode, n)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", mode, err)
		}
		rates[i] = rate
	}
	r["steps"] = n
	r["off_steps_per_s"], r["sandboxed_steps_per_s"], r["steps_per_s"] = rates[0], rates[1], rates[1]
	r["sandbox_ratio"] = ratio(rates[1], rates[0])
	r["sandbox_slowdown"] = ratio(rates[0], rates[1])
	loc, err := os.MkdirTemp(o.Dir, "stepgate-w7-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(loc)
	off, err := medianRun(sandbox.Policy{Mode: sandbox.Off}, loc)
	if err != nil {
		return nil, err
	}
	ws := sandbox.Policy{Mode: sandbox.WorkspaceWrite, Location: loc}
	in, err := medianFirst(ws, loc)
	if err != nil {
		return nil, err
	}
	self, err := medianFirst(ws, loc, sandbox.WithHelper("/proc/self/exe"))
	if err != nil {
		return nil, err
	}
	warm, err := medianWarm(ws, loc)
	if err != nil {
		return nil, err
	}
	r["off_exec_ms"], r["helper_start_ms"], r["helper_self_start_ms"] = ms(off), ms(in-off), ms(self-off)
	r["helper_warm_ms"] = ms(warm - off)
	r["helper"] = "engine"
	if exe, err := os.Executable(); err == nil {
		if _, err := os.Stat(filepath.Join(filepath.Dir(exe), sandbox.HelperName)); err == nil {
			r["helper"] = sandbox.HelperName
		}
	}
	return r, nil
}

// w7Half drives n steps of bash `true` on a fresh engine whose runs pin
// mode, and returns its steps per second. It first checks that the half
// is what it says: a sandboxed command runs in another user namespace than
// the engine, an unsandboxed one in the engine's.
func w7Half(ctx context.Context, o Options, mode string, n int) (float64, error) {
	e, err := newEnv(ctx, o)
	if err != nil {
		return 0, err
	}
	defer e.close()
	tools, err := benchTools()
	if err != nil {
		return 0, err
	}
	reg, err := executor.NewRegistry(tools...)
	if err != nil {
		return 0, err
	}
	allow := gate.Ruleset{{Action: "*", Resource: "*", Effect: gate.Allow, Source: gate.SourceUser}}
	h, err := commands.StartHost(ctx, e.js, reg, commands.HostConfig{
		StateDir: filepath.Join(e.dir, "state"), Stream: step.StreamConfig{Replicas: 1},
		Engine: commands.Config{Host: "bench", Sandbox: config.SandboxProfile{Mode: mode},
			Policy: func(string, string) commands.Policy { return commands.Policy{Rules: allow} }},
	})
	if err != nil {
		return 0, err
	}
	defer h.Close()
	loc := filepath.Join(e.dir, "location")
	if err := os.MkdirAll(loc, 0o700); err != nil {
		return 0, err
	}
	if err := checkContained(ctx, h, loc, mode != config.SandboxOff); err != nil {
		return 0, err
	}
	if sc, err := bashScript(ctx, h, loc, w7Warmup); err != nil {
		return 0, err
	} else if _, err := sc.drive(ctx, h); err != nil {
		return 0, err
	}
	sc, err := bashScript(ctx, h, loc, n)
	if err != nil {
		return 0, err
	}
	w, err := timed(n, func() error { _, err := sc.drive(ctx, h); return err })
	if err != nil {
		return 0, err
	}
	return w.rate(), nil
}

// bashScript starts a run in loc and prepares n steps of one bash `true`.
func bashScript(ctx context.Context, h *commands.Host, loc string, n int) (script, error) {
	return bashSteps(ctx, h, loc, "true", n)
}

func bashSteps(ctx context.Context, h *commands.Host, loc, command string, n int) (script, error) {
	info, err := h.StartRun(ctx, commands.StartRunRequest{Location: loc})
	if err != nil {
		return nil, err
	}
	args, _ := json.Marshal(map[string]string{"command": command})
	reqs := make(script, n)
	for i := range reqs {
		reqs[i] = commands.SubmitStepRequest{Run: info.Run, Step: i + 1,
			Calls: []commands.CallRequest{{ID: "c1", Tool: "bash", Args: args}}}
	}
	return reqs, nil
}

// checkContained runs `readlink /proc/self/ns/user` as a step and compares
// it with the engine's own user namespace.
func checkContained(ctx context.Context, h *commands.Host, loc string, sandboxed bool) error {
	own, err := os.Readlink("/proc/self/ns/user")
	if err != nil {
		return fmt.Errorf("the engine's user namespace: %w", err)
	}
	sc, err := bashSteps(ctx, h, loc, "readlink /proc/self/ns/user", 1)
	if err != nil {
		return err
	}
	out, err := h.SubmitStep(ctx, sc[0])
	if err != nil {
		return err
	}
	res := out.Results[0]
	if res.IsError {
		return fmt.Errorf("the check step: %s", res.Content)
	}
	if same := strings.Contains(res.Content, own); same == sandboxed {
		return fmt.Errorf("the command ran in user namespace %q, the engine's is %q: the half is not what it says", strings.TrimSpace(res.Content), own)
	}
	return nil
}

// medianRun is the median wall time of helperRuns runs of `true` under p
// (sandbox.Command).
func medianRun(p sandbox.Policy, loc string) (time.Duration, error) {
	return medianTime(func() (*sandbox.Cmd, error) { return sandbox.Command(p, []string{"true"}, loc, os.Environ()) })
}

// medianFirst is the median wall time of `true` under p as the first call
// of a new pool, whose helper then starts.
func medianFirst(p sandbox.Policy, loc string, opts ...sandbox.Option) (time.Duration, error) {
	var pl *sandbox.Pool
	defer func() {
		if pl != nil {
			_ = pl.Close()
		}
	}()
	return medianTime(func() (*sandbox.Cmd, error) {
		if pl != nil {
			_ = pl.Close()
		}
		pl = sandbox.NewPool(opts...)
		return pl.Command(p, []string{"true"}, loc, os.Environ())
	})
}

// medianWarm is the median wall time of `true` under p on a pool's warm
// helper.
func medianWarm(p sandbox.Policy, loc string) (time.Duration, error) {
	pl := sandbox.NewPool()
	defer pl.Close()
	cmd := func() (*sandbox.Cmd, error) { return pl.Command(p, []string{"true"}, loc, os.Environ()) }
	if c, err := cmd(); err != nil {
		return 0, err
	} else if err := c.Run(); err != nil {
		return 0, fmt.Errorf("true under %s: %w", p.Mode, err)
	}
	return medianTime(cmd)
}

// medianTime is the median wall time of helperRuns runs of the commands cmd
// returns (the clock starts once it returned).
func medianTime(cmd func() (*sandbox.Cmd, error)) (time.Duration, error) {
	ds := make([]time.Duration, helperRuns)
	for i := range ds {
		c, err := cmd()
		if err != nil {
			return 0, err
		}
		start := time.Now()
		if err := c.Run(); err != nil {
			return 0, fmt.Errorf("true: %w", err)
		}
		ds[i] = time.Since(start)
	}
	slices.Sort(ds)
	return ds[len(ds)/2], nil
}
