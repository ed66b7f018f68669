package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/replay"
	"github.com/stepgate/stepgate/step"
)

// exitStatus is an error that asks for a particular exit status (see
// exitCode): replay exits 1 when a verdict would change, 2 when it cannot
// read what it needs.
type exitStatus struct {
	code int
	err  error
}

func (e exitStatus) Error() string { return e.err.Error() }
func (e exitStatus) Unwrap() error { return e.err }

// ExitCode is the status the process exits with.
func (e exitStatus) ExitCode() int { return e.code }

// runReplay is `engine replay --policy FILE`: the policy backtest. Every
// recorded call the filters select is decided again against the candidate
// configuration (see replay.Candidate), with the project's saved approvals
// as they stood at that point of the stream, and each call that ran is
// held to the candidate's sandbox profile; each verdict or profile that
// would change is printed, then a summary. Nothing is executed or
// committed.
func runReplay(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("replay", stderr)
	var cf connFlags
	cf.register(fs)
	policy := fs.String("policy", "", "the candidate configuration file (YAML or JSON, the format of .stepgate/config.yaml); required")
	runID := fs.String("run", "", "re-decide only this run's calls")
	project := fs.String("project", "", "re-decide only the calls of this project's runs")
	since := fs.Duration("since", 0, "re-decide only the calls decided in this last while (e.g. 24h)")
	agent := fs.String("agent", "", "the agent of the candidate file whose rules apply (default: each run's own)")
	var floor sandboxFlag
	fs.Var(&floor, "sandbox", "the host's --sandbox floor the candidate's sandbox profile is tightened by, as serve --sandbox does: off, workspace-write or read-only (default off)")
	asJSON := fs.Bool("json", false, "print one JSON object a line: each change, then the summary")
	if err := parse(fs, args); err != nil {
		return err
	}
	switch {
	case *policy == "":
		return usageError{"engine replay: --policy FILE is required"}
	case fs.NArg() != 0:
		return usageError{"engine replay: unexpected arguments " + strings.Join(fs.Args(), " ")}
	case *since < 0:
		return usageError{"engine replay: --since must be positive"}
	}
	file, err := readPolicy(*policy)
	if err != nil {
		return exitStatus{2, fmt.Errorf("replay: %w", err)}
	}
	f := replay.Filter{Run: *runID, Project: *project}
	if *since > 0 {
		f.Since = time.Now().Add(-*since)
	}
	cand := replay.Candidate{File: file, Agent: *agent, Builtin: config.Builtin(loader(cf.data).ToolOutputDir), Floor: floor.floor()}
	bt := replay.NewBacktest(cand.Rules, f).WithSandbox(cand.Sandbox)
	out := newReplayPrinter(stdout, *asJSON)
	if err := cf.withLogReader(ctx, step.DefaultStream, func(l logReader) error { return bt.Run(ctx, l, out.change) }); err != nil {
		return exitStatus{2, fmt.Errorf("replay: %w", err)}
	}
	sum := bt.Summary()
	out.summary(sum)
	if n := sum.Changes(); n > 0 {
		return exitStatus{1, fmt.Errorf("replay: verdicts that would change under %s: %d", *policy, n)}
	}
	return nil
}

// readPolicy reads the candidate file as a project layer (see
// config.ReadFile: a regular file of bounded size, never a named pipe that
// would hold the verb).
func readPolicy(path string) (*config.File, error) {
	data, err := config.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return config.Parse(path, data, gate.SourceProject)
}

// replayPrinter prints a backtest's changes and summary, as text or JSON
// lines.
type replayPrinter struct {
	w    io.Writer
	json *json.Encoder
}

func newReplayPrinter(w io.Writer, asJSON bool) *replayPrinter {
	p := &replayPrinter{w: w}
	if asJSON {
		p.json = json.NewEncoder(w)
	}
	return p
}

func (p *replayPrinter) change(c replay.Change) {
	if p.json != nil {
		_ = p.json.Encode(struct {
			Type string `json:"type"`
			replay.Change
		}{"change", c})
		return
	}
	tool := c.Tool
	if tool == "" {
		tool = "?"
	}
	if sb := c.Sandbox; sb != nil {
		fmt.Fprintf(p.w, "run %s step %d call %s (%s): sandbox %s: %s → %s\n", c.Run, c.Step, c.CallID, tool, sb.Direction, sb.Before.Mode, sb.After.Mode)
		fmt.Fprintf(p.w, "  was: sandbox %s\n", sb.Before)
		fmt.Fprintf(p.w, "  now: sandbox %s\n", sb.After)
		return
	}
	fmt.Fprintf(p.w, "run %s step %d call %s (%s): %s → %s\n", c.Run, c.Step, c.CallID, tool, c.Old.Verdict, c.New.Verdict)
	fmt.Fprintf(p.w, "  was: %s\n", c.Old.Reason) // the reasons name the rule and its source
	fmt.Fprintf(p.w, "  now: %s\n", c.New.Reason)
}

func (p *replayPrinter) summary(s replay.Summary) {
	if p.json != nil {
		_ = p.json.Encode(struct {
			Type string `json:"type"`
			replay.Summary
		}{"summary", s})
		return
	}
	fmt.Fprintf(p.w, "re-decided %d calls in %d runs: %d would change", s.Redecided, s.Runs, s.Changes())
	if s.Changes() > 0 {
		var kinds []string
		for _, k := range slices.Sorted(maps.Keys(s.Changed)) {
			kinds = append(kinds, fmt.Sprintf("%s %d", k, s.Changed[k]))
		}
		fmt.Fprintf(p.w, " (%s)", strings.Join(kinds, ", "))
	}
	fmt.Fprintln(p.w)
	for _, why := range slices.Sorted(maps.Keys(s.NotRedecidable)) {
		fmt.Fprintf(p.w, "not re-decidable: %d (%s)\n", s.NotRedecidable[why], why)
	}
	if s.Refused > 0 {
		fmt.Fprintf(p.w, "refused before the gate (no permission decision): %d\n", s.Refused)
	}
	if s.Unreadable > 0 {
		fmt.Fprintf(p.w, "messages that are not commits, skipped: %d\n", s.Unreadable)
	}
}
