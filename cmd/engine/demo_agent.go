package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/stepgate/stepgate/agent/fakeprovider"
	"github.com/stepgate/stepgate/agent/model"
)

// The demo's task, and what its scripted model does with it.
const (
	demoAgentTask    = "Create hello.txt with a greeting, then count its lines with wc."
	demoAgentFile    = "hello.txt"
	demoAgentContent = "Hello from a model-driven run.\n"
	demoAgentCommand = "wc -l hello.txt"
	demoAgentModel   = "fake-model"
)

// The landmarks of engine agent's own output the demo reads its ids from.
var (
	demoRunRE    = regexp.MustCompile(`(?m)^run ([0-9A-Z]{26}) started`)
	demoTicketRE = regexp.MustCompile(`(?m)^  ticket ([0-9A-Z]{26}) `)
)

// demoAgentScript is the demo's model: it writes the file, then (with the
// write's result back) runs the command, then answers with text naming
// what both calls gave back.
func demoAgentScript(req fakeprovider.Request) (model.Turn, *fakeprovider.Fault) {
	switch len(req.Conversation.Exchanges) {
	case 0:
		return model.Turn{Text: "I will write " + demoAgentFile + " first.",
			Calls: []model.ToolCall{{Name: "write", Args: mustArgs(map[string]string{"path": demoAgentFile, "content": demoAgentContent})}}}, nil
	case 1:
		return model.Turn{Text: "Now I count its lines.",
			Calls: []model.ToolCall{{Name: "bash", Args: mustArgs(map[string]string{"command": demoAgentCommand})}}}, nil
	}
	var b strings.Builder
	b.WriteString("Done:")
	for _, ex := range req.Conversation.Exchanges {
		for _, r := range ex.Results {
			first, _, _ := strings.Cut(strings.TrimSpace(r.Content), "\n")
			fmt.Fprintf(&b, " %s said %q;", r.Name, first)
		}
	}
	return model.Turn{Text: strings.TrimSuffix(b.String(), ";") + "."}, nil
}

// mustArgs is v as a call's JSON arguments (v is the demo's own map).
func mustArgs(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// runDemoAgent is `engine demo --agent`: engine agent drives a run against
// a fake model server this process serves on loopback (the OpenAI Chat
// Completions wire shape; no key), with the engine embedded on a data
// directory. Each command a user would type runs as its own process of
// this binary: the agent stops at the bash call's ticket (--on-ask exit),
// a second process approves it, a third resumes the run from its log and
// the model finishes; engine show prints the run.
func runDemoAgent(ctx context.Context, dir string, stdout, stderr io.Writer) error {
	say := func(format string, a ...any) { fmt.Fprintf(stdout, format+"\n", a...) }
	ws, data := filepath.Join(dir, "workspace"), filepath.Join(dir, "data")
	project := filepath.Join(ws, ".stepgate", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(project), 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(project, []byte("agents:\n  build:\n    permission:\n      bash: ask\n"), 0o600); err != nil {
		return err
	}
	fake := newDemoModel()
	url, stop, err := fake.Start(ctx)
	if err != nil {
		return fmt.Errorf("start the fake model server: %w", err)
	}
	defer stop()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	say("== Stepgate agent demo: a model drives a run through the gate; no API key")
	say("   a fake model server speaks the OpenAI Chat Completions API on %s/v1 (this process serves it);", url)
	say("   its model writes %s, runs %q, then answers", demoAgentFile, demoAgentCommand)
	say("   the workspace %s has a project file, .stepgate/config.yaml: bash: ask", ws)
	sh := func(args ...string) string {
		q := make([]string, len(args))
		for i, a := range args {
			q[i] = shellQuote(a)
		}
		return "engine " + strings.Join(q, " ")
	}
	engine := func(wantCode int, args ...string) (string, error) {
		say("$ %s", sh(args...))
		var out bytes.Buffer
		cmd := exec.CommandContext(ctx, self, args...)
		cmd.Stdout, cmd.Stderr = io.MultiWriter(stdout, &out), stderr
		cmd.Env = demoEnv(os.Environ())
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code, err = ee.ExitCode(), nil
		}
		if err != nil {
			return "", fmt.Errorf("%s: %w", sh(args...), err)
		}
		if code != wantCode {
			return "", fmt.Errorf("%s: exit status %d, want %d", sh(args...), code, wantCode)
		}
		return out.String(), nil
	}

	say("")
	say("== 1. engine agent starts the run on an embedded engine; the bash call asks, and with --on-ask exit the")
	say("      process ends with the ticket (exit code 3): the conversation and the pending call are in the log")
	out, err := engine(3, "agent", "--data", data, "--location", ws, "--provider", "openai",
		"--base-url", url+"/v1", "--model", demoAgentModel, "--on-ask", "exit", demoAgentTask)
	if err != nil {
		return err
	}
	run, ticket := demoRunRE.FindStringSubmatch(out), demoTicketRE.FindStringSubmatch(out)
	if run == nil || ticket == nil {
		return fmt.Errorf("demo: engine agent printed no run or no ticket")
	}
	say("   (the process exited with code 3: run %s waits for a human)", run[1])

	say("")
	say("== 2. an operator approves the ticket from another process; the call runs and its step is final")
	if _, err := engine(0, "approve", ticket[1], "--data", data, "--as", "demo-operator"); err != nil {
		return err
	}

	say("")
	say("== 3. a new engine agent process resumes the run: the conversation is rebuilt from the log, the")
	say("      command's result goes to the model, and the model answers (provider, model and URL are the run's)")
	if _, err := engine(0, "agent", "--resume", run[1], "--data", data); err != nil {
		return err
	}
	total, per := fake.Count()
	if sentTwice(per) > 0 {
		return fmt.Errorf("demo: the fake model server was sent a turn twice (%d requests)", total)
	}
	say("   the fake model server answered %d requests, one a turn: no turn was sent to the model twice", total)

	say("")
	say("== 4. the run as the log has it")
	if _, err := engine(0, "show", run[1], "--data", data); err != nil {
		return err
	}
	say("")
	say("== with a model of your own (the data directory, or an engine at --nats URL):")
	say("   engine agent --provider openai --base-url http://localhost:11434/v1 --model qwen2.5-coder --data ./stepgate-data \"TASK\"")
	say("   OPENAI_API_KEY=… engine agent --provider openai --model gpt-4.1 --data ./stepgate-data \"TASK\"")
	say("   ANTHROPIC_API_KEY=… engine agent --provider anthropic --model claude-sonnet-4-5 --data ./stepgate-data \"TASK\"")
	return nil
}

// demoEnv is the environment of the demo's engine processes: the user's,
// without the providers' keys (the fake server needs none, and a real key
// has no business reaching it).
func demoEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if strings.HasPrefix(kv, "OPENAI_API_KEY=") || strings.HasPrefix(kv, "ANTHROPIC_API_KEY=") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// runDemoModel is `engine demo-model --listen ADDR`, not a verb: the agent
// demo's fake model server alone (the same scripted model, OpenAI Chat
// Completions at http://ADDR/v1, no key) until interrupted, for a CLI
// script that types engine agent as the guides show it. Stopped, it says
// how many requests it answered and whether any turn was sent twice.
func runDemoModel(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("demo-model", stderr)
	listen := fs.String("listen", "127.0.0.1:0", "the loopback address to serve on")
	if err := parse(fs, args); err != nil {
		return err
	}
	fake := newDemoModel()
	url, stop, err := fake.Listen(ctx, *listen)
	if err != nil {
		return fmt.Errorf("start the fake model server: %w", err)
	}
	defer stop()
	fmt.Fprintf(stdout, "fake model server on %s/v1 (model %s)\n", url, demoAgentModel)
	<-ctx.Done()
	total, per := fake.Count()
	fmt.Fprintf(stdout, "answered %d requests; turns sent more than once: %d\n", total, sentTwice(per))
	return nil
}

// newDemoModel is the agent demo's fake model server: its scripted model
// (demoAgentScript) in the OpenAI Chat Completions shape, no key.
func newDemoModel() *fakeprovider.Server {
	return fakeprovider.New(fakeprovider.Config{Script: demoAgentScript, Model: demoAgentModel})
}

// sentTwice is how many of the fake's conversations were answered with a
// turn more than once (fakeprovider.Server.Count): a turn sent to the
// model again.
func sentTwice(perConversation map[string]int) int {
	n := 0
	for _, answered := range perConversation {
		if answered > 1 {
			n++
		}
	}
	return n
}
