package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/stepgate/stepgate/agent"
	"github.com/stepgate/stepgate/cmd/engine/hosting"
	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/events"
)

// agentFlags are `engine agent`'s own flags.
type agentFlags struct {
	provider, model, baseURL, location, agent, onAsk, resume, system, listen string
	maxSteps                                                                 int
	maxTokens                                                                int64
	stream, json                                                             bool
}

// runAgent is `engine agent`: a model drives a run through the gate (see
// package agent). The flags say which provider and model, the engine to
// talk to, and what to do when a call asks; the task is the positional
// arguments; --resume RUN goes on with a run from its log.
func runAgent(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("agent", stderr)
	cf := connFlags{creates: true}
	cf.registerClient(fs)
	cf.registerTestTools(fs)
	var a agentFlags
	fs.StringVar(&a.provider, "provider", "", "the model's API: openai (Chat Completions), openai-responses or anthropic (Messages); with --resume, the run's unless given")
	fs.StringVar(&a.model, "model", "", "the provider's model name; with --resume, the run's unless given")
	fs.StringVar(&a.baseURL, "base-url", "", "the provider's endpoint, e.g. an OpenAI-compatible server (vLLM, llama.cpp, Ollama): http://127.0.0.1:8000/v1; default the user's file's providers.NAME.base_url, else the provider's own; the key goes only to one of these")
	fs.StringVar(&a.location, "location", ".", "the run's workspace root")
	fs.StringVar(&a.agent, "agent", "build", "the agent whose rules apply")
	fs.StringVar(&a.onAsk, "on-ask", "", "when a call asks for a human: wait (for engine approve from anywhere) or exit (exit code 3 with the ticket; engine agent --resume RUN goes on); default wait with --nats, exit with --data unless --listen")
	fs.StringVar(&a.resume, "resume", "", "go on with RUN from its log (the conversation is rebuilt; no recorded turn is sent again)")
	fs.StringVar(&a.system, "system", "", "the system text sent with every request")
	fs.StringVar(&a.listen, "listen", "", "with --data: the embedded server also listens here and serves the engine, so another process can answer a ticket (engine approve --nats nats://ADDR) while this one waits")
	fs.IntVar(&a.maxSteps, "max-steps", agent.DefaultMaxSteps, "the most steps (model turns with tool calls) the run takes; then it ends cancelled")
	fs.Int64Var(&a.maxTokens, "max-tokens", 0, "the most tokens of each model response (0: the provider's default; Anthropic: 4096)")
	fs.BoolVar(&a.stream, "stream", true, "stream the model's text as it arrives (--stream=false: one response at a time)")
	fs.BoolVar(&a.json, "json", false, "print one JSON event a line (text, turn, step, ticket, end)")
	if err := parse(fs, args); err != nil {
		return err
	}
	task := strings.TrimSpace(strings.Join(fs.Args(), " "))
	if err := a.check(task, &cf); err != nil {
		return err
	}
	log := logger(stderr)
	tp, stopTracing, err := hosting.NewTracing(ctx, os.Getenv, version())
	if err != nil {
		return err
	}
	defer func() { _ = stopTracing() }() // after the engine's close (deferred later, run first): its last spans are flushed
	ctx = envTrace(ctx, os.Getenv)
	cf.tracer = tp
	b, err := a.open(ctx, &cf, log)
	if err != nil {
		return err
	}
	defer b.close()
	set := events.ModelSettings{Provider: a.provider, Model: a.model, BaseURL: a.baseURL, System: a.system, Task: task, MaxTokens: a.maxTokens}
	if a.resume != "" {
		pinned, err := agent.Settings(ctx, b.api, a.resume)
		if err != nil {
			return err
		}
		set = resumeSettings(*pinned, a)
	}
	key, err := providerKey(ctx, &set, a.baseURL, a.resume != "", config.Loader{UserFile: config.UserFile()}, os.Getenv)
	if err != nil {
		return err
	}
	prov, err := newProvider(set, key)
	if err != nil {
		return err
	}
	out := newAgentPrinter(stdout, a.json, b.hint)
	cfg := agent.Config{API: b.api, Provider: prov, Out: out, Model: set.Model, MaxSteps: a.maxSteps, Stream: a.stream, Log: log,
		Redact: redactor(key), Pause: pauseHook(os.Getenv), OnAsk: agent.OnAskWait, Tracer: tp}
	if a.onAsk == "exit" {
		cfg.OnAsk = agent.OnAskExit
	}
	var res *agent.Result
	if a.resume != "" {
		res, err = agent.Resume(ctx, cfg, a.resume)
	} else {
		loc, aerr := filepath.Abs(a.location)
		if aerr != nil {
			return aerr
		}
		res, err = agent.Start(ctx, cfg, agent.StartRequest{Location: loc, Agent: a.agent, Settings: set})
	}
	if err != nil {
		return err
	}
	if res.Cause == events.CauseFailed || res.Cause == events.CauseDeclined {
		return fmt.Errorf("run %s ended %s: %s", res.Run, res.Cause, res.Reason)
	}
	return nil
}

// check refuses a command line that cannot be acted on.
func (a *agentFlags) check(task string, cf *connFlags) error {
	switch {
	case a.resume == "" && task == "":
		return usageError{"engine agent: give the task (engine agent --provider openai --model NAME \"TASK\"), or --resume RUN"}
	case a.resume != "" && task != "":
		return usageError{"engine agent: --resume goes on with the run's own task: give no task with it"}
	case a.resume == "" && (a.provider == "" || a.model == ""):
		return usageError{"engine agent: --provider and --model are required for a new run"}
	case a.provider != "" && !knownProvider(a.provider):
		return usageError{fmt.Sprintf("engine agent: --provider %q: want openai, openai-responses or anthropic", a.provider)}
	case a.listen != "" && cf.natsURL != "":
		return usageError{"engine agent: --listen is for --data: with --nats the served engine answers"}
	}
	if a.baseURL != "" {
		if err := checkBaseURL(a.baseURL); err != nil {
			return err
		}
	}
	switch a.onAsk {
	case "":
		a.onAsk = "wait"
		if cf.natsURL == "" && a.listen == "" {
			a.onAsk = "exit" // no other process can reach this one's engine while it waits
		}
	case "wait":
		if cf.natsURL == "" && a.listen == "" {
			return usageError{"engine agent: --on-ask wait with --data needs --listen ADDR: no other process can answer a ticket while this one holds the data directory"}
		}
	case "exit":
	default:
		return usageError{fmt.Sprintf("engine agent: --on-ask %q: want wait or exit", a.onAsk)}
	}
	return nil
}

// resumeSettings are the run's pinned settings, with what the flags give
// again in their place.
func resumeSettings(set events.ModelSettings, a agentFlags) events.ModelSettings {
	if a.provider != "" {
		set.Provider = a.provider
	}
	if a.model != "" {
		set.Model = a.model
	}
	if a.baseURL != "" {
		set.BaseURL = a.baseURL
	}
	if a.maxTokens != 0 {
		set.MaxTokens = a.maxTokens
	}
	return set
}
