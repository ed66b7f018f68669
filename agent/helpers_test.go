package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stepgate/stepgate/agent"
	"github.com/stepgate/stepgate/agent/model"
	"github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/executor/executortest"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/step/steptest"
)

// scripted is a model that answers each request with the next of its
// turns (the turn's number is the request's exchanges + 1) and keeps every
// request it was sent.
type scripted struct {
	mu    sync.Mutex
	turns func(n int, c model.Conversation) (model.Turn, error)
	sent  []model.Request
}

func (s *scripted) Name() string { return "scripted" }

func (s *scripted) Next(ctx context.Context, req model.Request) (model.Turn, error) {
	if err := ctx.Err(); err != nil {
		return model.Turn{}, err // a provider sends nothing on an ended context
	}
	s.mu.Lock()
	s.sent = append(s.sent, req)
	s.mu.Unlock()
	t, err := s.turns(len(req.Conversation.Exchanges)+1, req.Conversation)
	if err == nil && req.OnText != nil && t.Text != "" {
		req.OnText(t.Text)
	}
	return t, err
}

func (s *scripted) requests() []model.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]model.Request(nil), s.sent...)
}

// quiet is an Output that keeps what it was told.
type quiet struct {
	mu      sync.Mutex
	waiting [][]agent.Ticket
	steps   []*client.StepOutcome
	text    string
}

func (q *quiet) Started(string, bool, agent.State) {}
func (q *quiet) Text(d string)                     { q.mu.Lock(); q.text += d; q.mu.Unlock() }
func (q *quiet) Turn(string, int, model.Turn)      {}
func (q *quiet) Step(out *client.StepOutcome) {
	q.mu.Lock()
	q.steps = append(q.steps, out)
	q.mu.Unlock()
}
func (q *quiet) Ended(*agent.Result) {}
func (q *quiet) Waiting(_ string, _ int, ts []agent.Ticket) {
	q.mu.Lock()
	q.waiting = append(q.waiting, ts)
	q.mu.Unlock()
}

// host is an engine host on an embedded server with the counting tools:
// echo deny * is denied, count_fx asks.
func host(t testing.TB, cnt *executortest.Counts) *commands.Host {
	t.Helper()
	return hostWith(t, cnt, commands.Config{})
}

// hostWith is host with the engine's configuration cfg (its host and
// policy set here).
func hostWith(t testing.TB, cnt *executortest.Counts, cfg commands.Config) *commands.Host {
	t.Helper()
	s := steptest.Start(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg.Host = "h1"
	cfg.Policy = func(string, string) commands.Policy {
		return commands.Policy{Rules: gate.Ruleset{
			{Action: "*", Resource: "*", Effect: gate.Allow, Source: gate.SourceDefault},
			{Action: "echo", Resource: "deny *", Effect: gate.Deny, Source: gate.SourceUser},
			{Action: "count_fx", Resource: "*", Effect: gate.Ask, Source: gate.SourceUser},
		}}
	}
	h, err := commands.StartHost(ctx, s.JS, executortest.Registry(t, cnt), commands.HostConfig{StateDir: t.TempDir(), Engine: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// calls is a turn with the given calls (tool, JSON args), ids c<n>_<i>.
func calls(n int, text string, cs ...[2]string) model.Turn {
	t := model.Turn{ID: fmt.Sprintf("resp_%d", n), Text: text, Stop: "tool_calls", Usage: model.Usage{InputTokens: int64(100 * n), OutputTokens: 7}}
	for i, c := range cs {
		t.Calls = append(t.Calls, model.ToolCall{ID: fmt.Sprintf("c%d_%d", n, i+1), Name: c[0], Args: json.RawMessage(c[1])})
	}
	return t
}

// answer is a turn without calls.
func answer(n int, text string) model.Turn {
	return model.Turn{ID: fmt.Sprintf("resp_%d", n), Text: text, Stop: "stop", Usage: model.Usage{InputTokens: int64(100 * n), OutputTokens: 3}}
}

// settings are the agent settings of the tests' runs.
func settings(task string) agent.StartRequest {
	return agent.StartRequest{Agent: "build", Settings: eventsSettings(task)}
}
