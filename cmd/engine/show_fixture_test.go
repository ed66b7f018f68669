package main

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/builtin"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/step/steptest"
)

// stepClock is a clock the test moves: every commit of a step carries the
// time the test set, and the tools move it as they run.
type stepClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *stepClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// showTools are the built-ins plus "work" and "push", which take a while
// (1.5 s and 0.25 s on the test's clock) and raise one request each on
// their text, saved as "*", and "dump", which returns its text repeated.
func showTools(t *testing.T, clock *stepClock) *executor.Registry {
	t.Helper()
	tools, err := builtin.Tools()
	if err != nil {
		t.Fatal(err)
	}
	for _, build := range []func() (*executor.Tool, error){builtin.Echo, builtin.EchoFx} { // test tools: the steps call them
		tool, err := build()
		if err != nil {
			t.Fatal(err)
		}
		tools = append(tools, tool)
	}
	type in struct {
		Text  string `json:"text"`
		Times int    `json:"times,omitempty"`
	}
	mk := func(name string, took time.Duration) *executor.Tool {
		tool, err := executor.New(name, "Takes a while and returns its text.",
			func(_ context.Context, _ executor.Call, in in) (string, error) {
				clock.advance(took)
				return name + " done: " + in.Text, nil
			}, executor.WithEffect(descriptor.SideEffecting),
			executor.WithRequests(func(_ executor.Call, in in) ([]descriptor.Request, error) {
				return []descriptor.Request{{Action: name, Resources: []string{in.Text}, Save: []string{"*"}}}, nil
			}))
		if err != nil {
			t.Fatal(err)
		}
		return tool
	}
	dump, err := executor.New("dump", "Returns its text repeated.",
		func(_ context.Context, _ executor.Call, in in) (string, error) {
			return strings.Repeat(in.Text, in.Times), nil
		}, executor.WithEffect(descriptor.ReadOnly))
	if err != nil {
		t.Fatal(err)
	}
	reg, err := executor.NewRegistry(append(tools, mk("work", 1500*time.Millisecond), mk("push", 250*time.Millisecond), dump)...)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// recordShowFixture drives a real engine on an embedded server, with a
// fixed clock and id source, through a run that has every kind of line
// show prints: allowed, denied, asked and approved by a person, allowed by
// a saved grant, rejected with feedback, spilled output and a todo list. It
// returns the engine and the run, and the strings that differ between
// machines (the workspace and the output directory) with the names the
// golden files give them. The server keeps its storage in natsDir (a
// temporary directory when empty); stop closes the engine and the server
// (the test's cleanup does too).
func recordShowFixture(t *testing.T, natsDir string) (api commands.Wire, run string, norm *strings.Replacer, stop func(), s *steptest.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	s = steptest.Start(t, natsDir)
	clock := &stepClock{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	loc := t.TempDir()
	// The output directory's path has one length on every machine: the
	// spilled result's kept text (its bytes bound include the note naming
	// the file) is then the same everywhere.
	out := t.TempDir()
	if len(out) >= 120 {
		t.Fatalf("temporary directory %s: longer than the fixture's 120 bytes", out)
	}
	out = filepath.Join(out, strings.Repeat("o", 119-len(out)))
	if err := os.Mkdir(out, 0o700); err != nil {
		t.Fatal(err)
	}
	rules := gate.Ruleset{
		{Action: "*", Resource: "*", Effect: gate.Allow, Source: gate.SourceDefault},
		{Action: "push", Resource: "*", Effect: gate.Ask, Source: gate.SourceUser},
		{Action: "work", Resource: "ask-*", Effect: gate.Ask, Source: gate.SourceProject},
	}
	h, err := commands.StartHost(ctx, s.JS, showTools(t, clock), commands.HostConfig{
		StateDir: t.TempDir(),
		Lease:    commands.LeaseConfig{Off: true},
		Engine: commands.Config{Host: "h1", Version: "0.0.0-test", ToolOutputDir: out, Clock: clock.Now,
			IDs:    events.NewIDSource(rand.NewChaCha8([32]byte{13})),
			Limits: events.OutputLimits{MaxLines: 40, MaxBytes: 1024},
			Policy: func(string, string) commands.Policy { return commands.Policy{Rules: rules} }},
	})
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			if err := h.Close(); err != nil {
				t.Errorf("close host: %v", err)
			}
			s.Stop()
		})
	}
	t.Cleanup(stop)
	api = commands.Wire{Host: h}
	info, err := api.StartRun(ctx, commands.StartRunRequest{Location: loc, Project: "p1",
		Rules: []gate.Rule{{Action: "work", Resource: "secret*", Effect: gate.Deny}}})
	if err != nil {
		t.Fatal(err)
	}
	run = info.Run
	args := func(v any) json.RawMessage {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	n := 0
	submit := func(calls ...commands.CallRequest) *commands.StepOutcome {
		t.Helper()
		n++
		clock.advance(time.Second)
		o, err := api.SubmitStep(ctx, commands.SubmitStepRequest{Run: run, Step: n, Calls: calls})
		if err != nil {
			t.Fatalf("step %d: %v", n, err)
		}
		return o
	}
	reply := func(o *commands.StepOutcome, waited time.Duration, how, who, msg string) {
		t.Helper()
		if o.Final || len(o.Tickets) != 1 {
			t.Fatalf("step %d: %+v, want one ticket", o.Step, o)
		}
		clock.advance(waited)
		if _, err := api.Reply(ctx, commands.ReplyRequest{Ticket: o.Tickets[0].ID, Run: run, Reply: how, Principal: who, Message: msg}); err != nil {
			t.Fatalf("reply %s to step %d: %v", how, o.Step, err)
		}
		done, err := api.AwaitStep(ctx, commands.AwaitRequest{Run: run, Step: o.Step, Timeout: "30s"})
		if err != nil || !done.Final {
			t.Fatalf("await step %d: %+v, %v", o.Step, done, err)
		}
	}
	submit(
		commands.CallRequest{ID: "c1", Tool: "echo", Args: args(map[string]string{"text": "hello"})},
		commands.CallRequest{ID: "c2", Tool: "work", Args: args(map[string]string{"text": "secret-plan"})},
		commands.CallRequest{ID: "c3", Tool: "todowrite", Args: args(builtin.TodoInput{Todos: []builtin.Todo{
			{Content: "read the spec", Status: "completed", Priority: "high"},
			{Content: "write tests", Status: "in_progress", Priority: "medium"},
			{Content: "ship", Status: "pending", Priority: "low"}}})},
	)
	reply(submit(commands.CallRequest{ID: "c1", Tool: "work", Args: args(map[string]string{"text": "ask-once"})}), 3*time.Second, events.ReplyOnce, "alice", "")
	reply(submit(commands.CallRequest{ID: "c1", Tool: "work", Args: args(map[string]string{"text": "ask-always"})}), 2*time.Second, events.ReplyAlways, "bob", "")
	if o := submit(commands.CallRequest{ID: "c1", Tool: "work", Args: args(map[string]string{"text": "ask-later"})}); !o.Final {
		t.Fatalf("step %d: %+v, want it allowed by the saved grant", o.Step, o)
	}
	reply(submit(commands.CallRequest{ID: "c1", Tool: "push", Args: args(map[string]string{"text": "main"})}), 4*time.Second, events.ReplyReject, "carol", "not on main: open a pull request")
	submit(commands.CallRequest{ID: "c1", Tool: "dump", Args: args(map[string]any{"text": "0123456789abcdef\n", "times": 64})})
	clock.advance(time.Second)
	if _, err := api.EndRun(ctx, commands.EndRunRequest{Run: run}); err != nil {
		t.Fatal(err)
	}
	return api, run, strings.NewReplacer(loc, "$LOCATION", out, "$OUTPUT"), stop, s
}
