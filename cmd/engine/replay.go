package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stepgate/stepgate/commands"
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
// as they stood at that point of the stream; each verdict that would change
// is printed, then a summary. Nothing is executed or committed.
func runReplay(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("replay", stderr)
	var cf connFlags
	cf.register(fs)
	policy := fs.String("policy", "", "the candidate configuration file (YAML or JSON, the format of .stepgate/config.yaml); required")
	runID := fs.String("run", "", "re-decide only this run's calls")
	project := fs.String("project", "", "re-decide only the calls of this project's runs")
	since := fs.Duration("since", 0, "re-decide only the calls decided in this last while (e.g. 24h)")
	agent := fs.String("agent", "", "the agent of the candidate file whose rules apply (default: each run's own)")
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
	file, err := config.Load(*policy, gate.SourceProject)
	if err == nil && file == nil {
		err = fmt.Errorf("read configuration %s: %w", *policy, os.ErrNotExist)
	}
	if err != nil {
		return exitStatus{2, fmt.Errorf("replay: %w", err)}
	}
	f := replay.Filter{Run: *runID, Project: *project}
	if *since > 0 {
		f.Since = time.Now().Add(-*since)
	}
	cand := replay.Candidate{File: file, Agent: *agent, Builtin: config.Builtin(loader(cf.data).ToolOutputDir)}
	bt := replay.NewBacktest(cand.Rules, f)
	out := newReplayPrinter(stdout, *asJSON)
	if err := withLog(ctx, &cf, stderr, func(l replay.Log) error { return bt.Run(ctx, l, out.change) }); err != nil {
		return exitStatus{2, fmt.Errorf("replay: %w", err)}
	}
	sum := bt.Summary()
	out.summary(sum)
	if n := sum.Changes(); n > 0 {
		return exitStatus{1, fmt.Errorf("replay: verdicts that would change under %s: %d", *policy, n)}
	}
	return nil
}

// withLog calls fn with the log the flags name, read-only: with --nats,
// the stream read through the user's own NATS connection (the backtest
// needs every commit in stream order, grants included, which is what that
// user may read; no service endpoint is involved); otherwise the stream of
// an embedded server on --data, opened like engine verify (no engine may be
// serving the directory).
func withLog(ctx context.Context, cf *connFlags, stderr io.Writer, fn func(replay.Log) error) error {
	var nc *nats.Conn
	if cf.natsURL == "" {
		e, err := startEmbedded(ctx, hostOptions{dataDir: cf.data, hostName: fmt.Sprintf("replay-%d", os.Getpid()), log: logger(stderr),
			lease: commands.LeaseConfig{Off: true}})
		if err != nil {
			return fmt.Errorf("open the log on %s (is an engine serving it? then use --nats): %w", cf.data, err)
		}
		defer e.close()
		nc = e.nc
	} else {
		var err error
		if nc, err = nats.Connect(cf.natsURL, cf.options()...); err != nil {
			return fmt.Errorf("connect to %s: %w", cf.natsURL, err)
		}
		defer nc.Close()
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	s, err := js.Stream(ctx, step.DefaultStream)
	if err != nil {
		return fmt.Errorf("open stream %s: %w", step.DefaultStream, err)
	}
	return fn(streamLog{s})
}

// streamLog reads a stream without setting it up (step.Open would update
// its configuration, which a reader may not be allowed to do). It stops at
// the message after which none was pending when it was delivered, so a
// deleted last message does not leave it waiting.
type streamLog struct{ s jetstream.Stream }

// Scan implements replay.Log.
func (l streamLog) Scan(ctx context.Context, fn func(seq uint64, data []byte) error) error {
	cons, err := l.s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverAllPolicy})
	if err != nil {
		return fmt.Errorf("read the stream: %w", err)
	}
	info, err := cons.Info(ctx)
	if err != nil {
		return fmt.Errorf("read the stream: %w", err)
	}
	if info.NumPending == 0 {
		return nil
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(4096))
	if err != nil {
		return fmt.Errorf("read the stream: %w", err)
	}
	defer context.AfterFunc(ctx, it.Stop)()
	defer it.Stop()
	for {
		m, err := it.Next()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("read the stream: %w", err)
		}
		md, err := m.Metadata()
		if err != nil {
			return fmt.Errorf("read the stream: %w", err)
		}
		if err := fn(md.Sequence.Stream, m.Data()); err != nil {
			return err
		}
		if md.NumPending == 0 {
			return nil
		}
	}
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
