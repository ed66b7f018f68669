package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/stepgate/stepgate/cmd/engine/render"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/gate"
)

// scriptLine is one step of a scripted model.
type scriptLine struct {
	Calls []commands.CallRequest `json:"calls"`
}

// readScript reads a script: one JSON object per line, each one step;
// blank lines and lines starting with # are skipped. Errors name the line.
func readScript(r io.Reader, name string) ([]scriptLine, error) {
	var steps []scriptLine
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		var s scriptLine
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&s); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		if len(s.Calls) == 0 {
			return nil, fmt.Errorf("%s:%d: a step needs at least one call", name, n)
		}
		steps = append(steps, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return steps, nil
}

// runScript is `engine run`: a scripted model. It starts a run, submits the
// script's steps in order, prints each step's results and ends the run.
func runScript(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("run", stderr)
	cf := connFlags{creates: true} // a run may be the first on --data
	cf.registerClient(fs)
	cf.registerTestTools(fs)
	script := fs.String("script", "", "the script: one JSON line per step, {\"calls\":[{\"id\":…,\"tool\":…,\"args\":{…}}]}")
	location := fs.String("location", ".", "the run's workspace root")
	agent := fs.String("agent", "build", "the agent whose rules apply")
	rulesFile := fs.String("rules", "", "a JSON file of per-run rules that narrow the agent's ([{\"action\",\"resource\",\"effect\"}])")
	asJSON := fs.Bool("json", false, "print one JSON object per step")
	keepOpen := fs.Bool("keep-open", false, "do not end the run after the script")
	wait := fs.Bool("wait", false, "when a step awaits a human, wait for its answer and go on (default: print the tickets and exit 0)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 { // a location typed without --location would run in "."
		return usageError{fmt.Sprintf("engine run: unexpected argument %q (the workspace is --location DIR)", fs.Arg(0))}
	}
	if *script == "" {
		return usageError{"engine run: --script is required"}
	}
	f, err := os.Open(*script)
	if err != nil {
		return err
	}
	steps, err := readScript(f, *script)
	f.Close()
	if err != nil {
		return err
	}
	loc, err := filepath.Abs(*location)
	if err != nil {
		return err
	}
	var rules []gate.Rule
	if *rulesFile != "" {
		if rules, err = readRules(*rulesFile); err != nil {
			return err
		}
	}
	return cf.with(ctx, stderr, func(api engineAPI) error {
		p := render.NewPrinter(stdout, *asJSON)
		p.Conn = cf.hint()
		return drive(ctx, api, commands.StartRunRequest{Agent: *agent, Location: loc, Rules: rules}, steps, !*keepOpen, *wait, p)
	})
}

// drive runs a script against api and reports every step to p. A step that
// awaits a human ends the script (the run stays open) unless wait is set.
func drive(ctx context.Context, api engineAPI, start commands.StartRunRequest, steps []scriptLine, end, wait bool, p *render.Printer) error {
	info, err := api.StartRun(ctx, start)
	if err != nil {
		return err
	}
	p.Started(info)
	for i, s := range steps {
		out, err := api.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: i + 1, Calls: s.Calls})
		if errors.Is(err, commands.ErrRunNotActive) {
			p.Note(info.Run, "the run has ended (declined by a human): the script stops")
			return nil
		}
		if err != nil {
			return fmt.Errorf("run %s step %d: %w", info.Run, i+1, err)
		}
		p.Step(out)
		if out.Final {
			continue
		}
		if !wait {
			p.Note(info.Run, fmt.Sprintf("the run awaits a human: answer with the commands above; the script stops here, and the run stays open (engine end %s%s ends it)", info.Run, p.Conn))
			return nil
		}
		if out, err = awaitFinal(ctx, api, commands.AwaitRequest{Run: info.Run, Step: i + 1}); err != nil {
			return fmt.Errorf("run %s step %d: %w", info.Run, i+1, err)
		}
		p.Step(out)
	}
	if !end {
		p.Note(info.Run, fmt.Sprintf("the run stays open (engine end %s%s ends it)", info.Run, p.Conn))
		return nil
	}
	sum, err := api.EndRun(ctx, commands.EndRunRequest{Run: info.Run})
	if err != nil {
		return err
	}
	p.Ended(sum)
	return nil
}

// readRules reads --rules: a JSON list of rules, from a regular file of
// bounded size (config.ReadFile).
func readRules(path string) ([]gate.Rule, error) {
	b, err := config.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rules []gate.Rule
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rules); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rules, nil
}
