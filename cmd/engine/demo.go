package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"

	"github.com/stepgate/stepgate/cmd/engine/hosting"
	"github.com/stepgate/stepgate/cmd/engine/render"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/gate"
)

// runDemo is `engine demo`: a full run on an embedded server in a temporary
// directory, with the real tools — glob, grep and read allowed, a read of a
// secret blocked, an unknown tool refused, a large bash output spilled to a
// file and paged with read — then an edit and a bash command that ask, so
// the run waits for a human. The engine stops, a new engine process starts
// on the same data, approves the edit and rejects the command with
// feedback, the run finishes, and the rebuilt projection shows it all.
// With --agent, engine agent drives the run instead (runDemoAgent).
func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("demo", stderr)
	keep := fs.Bool("keep", false, "keep the temporary directory and print its path")
	asAgent := fs.Bool("agent", false, "engine agent drives the run instead of a script: a fake model server on loopback (no key), a confirmation answered from another process, and a resume in a new one")
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
	if *asAgent {
		return runDemoAgent(ctx, dir, stdout, stderr)
	}
	ws := filepath.Join(dir, "workspace")
	files := map[string]string{
		"main.go":       "package main\n\n// TODO: bump before the release\nconst version = \"0.9\"\n",
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
	opts := hosting.Options{DataDir: filepath.Join(dir, "data"), HostName: "demo-1", Log: logger(stderr)}
	say := func(format string, a ...any) { fmt.Fprintf(stdout, format+"\n", a...) }

	say("== Stepgate demo: an embedded NATS server in %s", opts.DataDir)
	e, err := startEmbedded(ctx, opts)
	if err != nil {
		return err
	}
	defer func() {
		if e != nil {
			e.Close()
		}
	}()
	p := render.NewPrinter(stdout, false)
	info, err := e.Host.StartRun(ctx, commands.StartRunRequest{Location: ws, Project: "demo", Rules: []gate.Rule{
		{Action: "read", Resource: "secrets/*", Effect: gate.Deny},
		{Action: "edit", Resource: "*", Effect: gate.Ask},
		{Action: "bash", Resource: "git push *", Effect: gate.Ask},
	}})
	if err != nil {
		return err
	}
	p.Started(info)
	say("   rules: the build agent's defaults, plus this run's: deny read secrets/*, ask edit, ask bash \"git push *\"")
	submit := func(n int, calls ...commands.CallRequest) error {
		out, err := e.Host.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: n, Calls: calls})
		if err != nil {
			return err
		}
		p.Step(out)
		return nil
	}
	if err := submit(1,
		demoCall("c1", "glob", map[string]string{"pattern": "**/*.go"}),
		demoCall("c2", "grep", map[string]string{"pattern": "TODO"}),
		demoCall("c3", "read", map[string]string{"path": "notes.txt"})); err != nil {
		return err
	}
	if err := submit(2,
		demoCall("c4", "read", map[string]string{"path": "secrets/token"}),
		demoCall("c5", "rm", map[string]string{"path": "notes.txt"}),
		demoCall("c6", "bash", map[string]string{"command": "seq 1 5000"})); err != nil {
		return err
	}
	r, err := e.Host.Show(ctx, commands.ShowRequest{Run: info.Run})
	if err != nil {
		return err
	}
	spilled := r.Steps[1].Calls[2].Result.Files
	if len(spilled) != 1 {
		return fmt.Errorf("demo: the large output was not spilled to a file")
	}
	say("   c6's 5000 lines went to %s; the model pages through it with read:", spilled[0])
	if err := submit(3, demoCall("c7", "read", map[string]any{"path": spilled[0], "offset": 4999, "limit": 5})); err != nil {
		return err
	}
	if err := submit(4,
		demoCall("c8", "edit", map[string]string{"path": "main.go", "oldString": `version = "0.9"`, "newString": `version = "1.0"`}),
		demoCall("c9", "bash", map[string]string{"command": "git push --force"})); err != nil {
		return err
	}
	err = e.Close()
	e = nil
	if err != nil {
		return err
	}
	say("== the run waits for a human; the engine stops")

	say("== a new engine process starts on the same data")
	self, err := os.Executable()
	if err != nil {
		return err
	}
	child := exec.CommandContext(ctx, self, "demo-resume", "--data", opts.DataDir, "--run", info.Run, "--step", "5")
	child.Stdout, child.Stderr = stdout, stderr
	if err := child.Run(); err != nil {
		return fmt.Errorf("the second engine process: %w", err)
	}
	return nil
}

// runDemoResume is the demo's second engine process (a hidden verb): it
// opens the data the first one left, approves the pending edit, rejects the
// bash command with feedback, reads the edited file, finishes the run and
// shows it.
func runDemoResume(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("demo-resume", stderr)
	data := fs.String("data", "", "the demo's data directory")
	run := fs.String("run", "", "the demo's run")
	next := fs.Int("step", 0, "the next step number")
	if err := parse(fs, args); err != nil {
		return err
	}
	say := func(format string, a ...any) { fmt.Fprintf(stdout, format+"\n", a...) }
	e, err := startEmbedded(ctx, hosting.Options{DataDir: *data, HostName: "demo-2", Log: logger(stderr)})
	if err != nil {
		return err
	}
	defer e.Close()
	p := render.NewPrinter(stdout, false)
	say("   (process %d) projection loaded from its checkpoint (stream sequence %d); %d commits replayed after it",
		os.Getpid(), e.Host.Proj.Seq(), e.Host.Proj.Replayed())
	page, err := e.Host.Tickets(ctx, commands.TicketsRequest{Run: *run})
	if err != nil {
		return err
	}
	tickets := page.Tickets
	// The edit is approved first: a rejection with feedback also settles the
	// step's other pending calls as not run.
	slices.SortStableFunc(tickets, func(a, b commands.TicketView) int {
		return cmp.Compare(boolInt(a.Tool == "bash"), boolInt(b.Tool == "bash"))
	})
	for _, t := range tickets {
		say("   pending ticket %s: %s %s (step %d)", t.ID, t.Tool, string(t.Args), t.Step)
		req := commands.ReplyRequest{Ticket: t.ID, Reply: events.ReplyOnce, Principal: "demo-operator"}
		if t.Tool == "bash" {
			req.Reply, req.Message = events.ReplyReject, "no force pushes; open a pull request instead"
		}
		res, err := e.Host.Reply(ctx, req)
		if err != nil {
			return err
		}
		say("   %s by demo-operator", map[bool]string{true: "approved once", false: "rejected with feedback"}[res.Approved])
		if res.Outcome != nil {
			say("   every ticket of step %d is answered; the approved call ran and the step is final:", res.Step)
			p.Step(res.Outcome)
		}
	}
	out, err := e.Host.SubmitStep(ctx, commands.SubmitStepRequest{Run: *run, Step: *next,
		Calls: []commands.CallRequest{demoCall("c10", "grep", map[string]string{"pattern": "version ="})}})
	if err != nil {
		return err
	}
	p.Step(out)
	sum, err := commands.Wire{Host: e.Host}.EndRun(ctx, commands.EndRunRequest{Run: *run})
	if err != nil {
		return err
	}
	p.Ended(sum)
	say("== the run as the rebuilt projection shows it (engine show %s)", *run)
	d, err := showRun(ctx, commands.Wire{Host: e.Host}, *run)
	if err != nil {
		return err
	}
	render.Timeline(stdout, d, render.Palette{})
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func demoCall(id, tool string, args any) commands.CallRequest {
	b, _ := json.Marshal(args)
	return commands.CallRequest{ID: id, Tool: tool, Args: b}
}
