package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/gate"
)

// runDemo is `engine demo`: a full run on an embedded server in a temporary
// directory — allowed and blocked calls, then a call that asks, so the run
// waits for a human — then the engine stops, a new engine process starts on
// the same data, the ticket is approved there, the call runs, the run
// finishes, and the rebuilt projection shows the whole run.
func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("demo", stderr)
	keep := fs.Bool("keep", false, "keep the temporary directory and print its path")
	if err := parse(fs, args); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "stepgate-demo-*")
	if err != nil {
		return err
	}
	if *keep {
		fmt.Fprintf(stdout, "data and workspace kept in %s\n", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	ws := filepath.Join(dir, "workspace")
	files := map[string]string{
		"notes.txt":     "Ship the release on Friday.\n",
		"secrets/token": "do-not-leak\n",
	}
	for name, body := range files {
		p := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			return err
		}
	}
	opts := hostOptions{dataDir: filepath.Join(dir, "data"), hostName: "demo-1", log: logger(stderr)}
	say := func(format string, a ...any) { fmt.Fprintf(stdout, format+"\n", a...) }

	say("== Stepgate demo: an embedded NATS server in %s", opts.dataDir)
	e, err := startEmbedded(ctx, opts)
	if err != nil {
		return err
	}
	p := newPrinter(stdout, false)
	info, err := e.host.StartRun(ctx, commands.StartRunRequest{Location: ws, Project: "demo", Rules: []gate.Rule{
		{Action: "read", Resource: "secrets/*", Effect: gate.Deny},
		{Action: "echo_fx", Resource: "deploy *", Effect: gate.Ask},
	}})
	if err != nil {
		e.close()
		return err
	}
	p.started(info)
	say("   rules: the build agent's defaults, plus this run's: deny read secrets/*, ask echo_fx \"deploy *\"")
	before := [][]commands.CallRequest{
		{demoCall("c1", "echo", map[string]string{"text": "hello from the model"}),
			demoCall("c2", "read_file", map[string]string{"path": "notes.txt"})},
		{demoCall("c3", "read_file", map[string]string{"path": "secrets/token"}),
			demoCall("c4", "rm", map[string]string{"path": "notes.txt"}),
			demoCall("c5", "echo_fx", map[string]string{"text": "deploy to production"})},
	}
	for i, calls := range before {
		out, err := e.host.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: i + 1, Calls: calls})
		if err != nil {
			e.close()
			return err
		}
		p.step(out)
	}
	if err := e.close(); err != nil {
		return err
	}
	say("== the run waits for a human; the engine stops")

	say("== a new engine process starts on the same data")
	self, err := os.Executable()
	if err != nil {
		return err
	}
	child := exec.CommandContext(ctx, self, "demo-resume", "--data", opts.dataDir, "--run", info.Run, "--step", fmt.Sprint(len(before)+1))
	child.Stdout, child.Stderr = stdout, stderr
	if err := child.Run(); err != nil {
		return fmt.Errorf("the second engine process: %w", err)
	}
	return nil
}

// runDemoResume is the demo's second engine process (a hidden verb): it
// opens the data the first one left, approves the pending ticket, lets the
// call run, finishes the run and shows it.
func runDemoResume(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("demo-resume", stderr)
	data := fs.String("data", "", "the demo's data directory")
	run := fs.String("run", "", "the demo's run")
	next := fs.Int("step", 0, "the next step number")
	if err := parse(fs, args); err != nil {
		return err
	}
	say := func(format string, a ...any) { fmt.Fprintf(stdout, format+"\n", a...) }
	e, err := startEmbedded(ctx, hostOptions{dataDir: *data, hostName: "demo-2", log: logger(stderr)})
	if err != nil {
		return err
	}
	defer e.close()
	p := newPrinter(stdout, false)
	say("   (process %d) projection loaded from its checkpoint (stream sequence %d); %d commits replayed after it",
		os.Getpid(), e.host.Proj.Seq(), e.host.Proj.Replayed())
	tickets, err := e.host.Tickets(ctx, commands.TicketsRequest{Run: *run})
	if err != nil {
		return err
	}
	for _, t := range tickets {
		say("   pending ticket %s: %s %s (step %d)", t.ID, t.Tool, string(t.Args), t.Step)
		res, err := e.host.Reply(ctx, commands.ReplyRequest{Ticket: t.ID, Reply: "once", Principal: "demo-operator"})
		if err != nil {
			return err
		}
		say("   approved once by demo-operator; the call ran and step %d is final:", res.Step)
		p.step(res.Outcome)
	}
	out, err := e.host.SubmitStep(ctx, commands.SubmitStepRequest{Run: *run, Step: *next,
		Calls: []commands.CallRequest{demoCall("c6", "echo_fx", map[string]string{"text": "write the release notes"})}})
	if err != nil {
		return err
	}
	p.step(out)
	sum, err := e.host.EndRun(ctx, commands.EndRunRequest{Run: *run})
	if err != nil {
		return err
	}
	p.ended(sum)
	say("== the run as the rebuilt projection shows it (engine show %s)", *run)
	r, err := e.host.Show(ctx, commands.ShowRequest{Run: *run})
	if err != nil {
		return err
	}
	timeline(stdout, r)
	return nil
}

func demoCall(id, tool string, args any) commands.CallRequest {
	b, _ := json.Marshal(args)
	return commands.CallRequest{ID: id, Tool: tool, Args: b}
}
