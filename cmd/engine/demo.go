package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/gate"
)

// runDemo is `engine demo`: a full run on an embedded server in a temporary
// directory — allowed and blocked calls — then the engine stops, a new engine
// starts on the same data, the run goes on, and the rebuilt projection shows
// the whole run.
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
	info, err := e.host.StartRun(ctx, commands.StartRunRequest{Location: ws, Rules: []gate.Rule{
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
	say("== engine stopped; starting a new engine on the same data")

	opts.hostName = "demo-2"
	e, err = startEmbedded(ctx, opts)
	if err != nil {
		return err
	}
	defer e.close()
	say("   projection loaded from its checkpoint (stream sequence %d); %d commits replayed after it", e.host.Proj.Seq(), e.host.Proj.Replayed())
	out, err := e.host.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: len(before) + 1,
		Calls: []commands.CallRequest{demoCall("c6", "echo_fx", map[string]string{"text": "write the release notes"})}})
	if err != nil {
		return err
	}
	p.step(out)
	sum, err := e.host.EndRun(ctx, commands.EndRunRequest{Run: info.Run})
	if err != nil {
		return err
	}
	p.ended(sum)
	say("== the run as the rebuilt projection shows it (engine show %s)", info.Run)
	r, err := e.host.Show(ctx, commands.ShowRequest{Run: info.Run})
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
