package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/stepgate/stepgate/agent/model"
	"github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/events"
	"go.opentelemetry.io/otel/trace"
)

// OnAsk is what the loop does when a step waits for a human.
type OnAsk int

const (
	// OnAskWait waits for the tickets' answers (engine approve, from
	// anywhere) and goes on.
	OnAskWait OnAsk = iota
	// OnAskExit stops with an [*AwaitingError]; the run stays open.
	OnAskExit
)

// maxReloads bounds the reloads in a row after the engine refused a move
// (see errMovedOn).
const maxReloads = 8

// DefaultMaxSteps bounds a run's steps when Config.MaxSteps is 0.
const DefaultMaxSteps = 50

// Config is what the loop needs. API, Provider and Out are required.
type Config struct {
	API      client.API
	Provider model.Provider
	Out      Output
	// Model overrides the model the run's settings name ("" keeps it).
	Model string
	// MaxSteps bounds the run's steps (its turns with calls), counted over
	// the whole run, before a resume too; reached, the run ends cancelled.
	MaxSteps int
	OnAsk    OnAsk
	Stream   bool
	Retry    Retry
	// Log receives warnings (retries); default slog.Default().
	Log *slog.Logger
	// Redact removes secrets (the API key) from a provider's message
	// before it is recorded or shown; nil: none.
	Redact func(string) string
	// Sleep waits between retries; default a timer honouring ctx.
	Sleep func(ctx context.Context, d time.Duration) error
	// Tracer, when set, traces the loop: an invoke_agent span over its
	// drive, whose trace context its engine requests carry (the engine's
	// spans of its steps are its children), and a chat span a model
	// request with the GenAI semantic conventions' attributes, token usage
	// included. Nil: no spans.
	Tracer trace.TracerProvider
	// Pause, when set, is called at each named point of a turn
	// (before-request, after-response, after-turn, after-step): a test
	// stops the process there. after-turn is met after a turn without
	// calls (the model's answer) is recorded; a turn of calls is recorded
	// by its step's request, and after-step follows it.
	Pause func(ctx context.Context, point string)
}

func (c *Config) sleep(ctx context.Context, d time.Duration) error {
	if c.Sleep != nil {
		return c.Sleep(ctx, d)
	}
	return sleepCtx(ctx, d)
}

// pause calls Pause at point; it returns ctx's error once ctx ended (the
// process is stopping: nothing more is sent).
func (c *Config) pause(ctx context.Context, point string) error {
	if c.Pause != nil {
		c.Pause(ctx, point)
	}
	return ctx.Err()
}

// StartRequest is a new run a model drives.
type StartRequest struct {
	Location string
	Agent    string
	Settings events.ModelSettings
}

// loop is one run being driven.
type loop struct {
	cfg       Config
	run       string
	agentName string
	model     string
	maxToks   int64
	st        State
	waiting   []Ticket // the tickets the last submit answered
	maxSteps  int
	// fresh is the last turn while it is not in the log: a turn of calls
	// goes to the engine with its step, which records it first.
	fresh *events.ModelTurnRecorded
}

// Start starts a run with the settings pinned in its start and drives it
// until it ends, or stops at a ticket (OnAskExit: [*AwaitingError]). A
// provider error that is not retryable (or still failing after the
// retries) ends the run failed with the provider's message and is
// returned. ctx ending leaves the run open, for [Resume].
func Start(ctx context.Context, cfg Config, req StartRequest) (*Result, error) {
	id := events.NewIDSource(nil).New(time.Now()) // chosen here: a start sent again is the same run
	set := req.Settings
	info, err := cfg.API.StartRun(ctx, client.StartRunRequest{Run: id, Location: req.Location, Agent: req.Agent, Model: &set})
	if err != nil {
		return nil, fmt.Errorf("start run: %w", err)
	}
	l := newLoop(cfg, info.Run, &set)
	l.agentName = req.Agent
	l.st = State{Conversation: model.Conversation{System: set.System, Task: set.Task}}
	cfg.Out.Started(info.Run, false, l.st)
	return l.traced(ctx)
}

// Settings reads the agent settings a run's start pinned.
func Settings(ctx context.Context, api client.API, run string) (*events.ModelSettings, error) {
	r, err := api.Show(ctx, client.ShowRequest{Run: run})
	if err != nil {
		return nil, err
	}
	if r.Snapshot.Model == nil {
		return nil, fmt.Errorf("run %s: %w", run, ErrNotAgentRun)
	}
	return r.Snapshot.Model, nil
}

// Resume goes on with a run a model drives, on any host, from its log:
// the conversation is rebuilt ([Conversation]); a recorded turn whose step
// was not submitted is submitted (a step the engine has already is never
// run again); a step that waits is waited on (or, OnAskExit, stopped at);
// the next model request is sent only once every call of the last turn
// has its result, and a recorded turn is never sent again.
func Resume(ctx context.Context, cfg Config, run string) (*Result, error) {
	r, err := cfg.API.Show(ctx, client.ShowRequest{Run: run})
	if err != nil {
		return nil, err
	}
	st, err := Conversation(r)
	if err != nil {
		return nil, err
	}
	l := newLoop(cfg, run, r.Snapshot.Model)
	l.agentName = r.Snapshot.Agent
	l.st = st
	if st.Phase == NeedResults {
		l.waiting = pendingTickets(r, st.Steps)
	}
	cfg.Out.Started(run, true, st)
	return l.traced(ctx)
}

func newLoop(cfg Config, run string, set *events.ModelSettings) *loop {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	l := &loop{cfg: cfg, run: run, model: set.Model, maxToks: set.MaxTokens, maxSteps: cfg.MaxSteps}
	if cfg.Model != "" {
		l.model = cfg.Model
	}
	if l.maxSteps <= 0 {
		l.maxSteps = DefaultMaxSteps
	}
	return l
}

// reload reads the run's state from its log again: another process (a
// resume elsewhere, a human's reject) moved it on.
func (l *loop) reload(ctx context.Context) error {
	r, err := l.cfg.API.Show(ctx, client.ShowRequest{Run: l.run})
	if err != nil {
		return err
	}
	st, err := Conversation(r)
	if err != nil {
		return err
	}
	l.st, l.waiting, l.fresh = st, nil, nil
	if st.Phase == NeedResults {
		l.waiting = pendingTickets(r, st.Steps)
	}
	return nil
}

// traced is drive under the invoke_agent span (see Config.Tracer).
func (l *loop) traced(ctx context.Context) (*Result, error) {
	ctx, end := l.invoke(ctx)
	res, err := l.drive(ctx)
	end(res, err)
	return res, err
}

// drive moves the run on, phase by phase, until it ends or stops.
func (l *loop) drive(ctx context.Context) (*Result, error) {
	reloads := 0 // reloads in a row: the log disagreeing with itself must not spin
	for {
		if err := ctx.Err(); err != nil {
			return nil, err // the run stays where the log has it, for a resume
		}
		var err error
		switch l.st.Phase {
		case Ended:
			return l.ended(ctx)
		case Finished:
			return l.end(ctx, events.CauseCompleted, "", nil)
		case NeedTurn:
			if l.st.Steps >= l.maxSteps {
				return l.end(ctx, events.CauseCancelled, fmt.Sprintf("the run reached its bound of %d steps (--max-steps)", l.maxSteps), nil)
			}
			err = l.turn(ctx)
		case NeedSubmit:
			err = l.submit(ctx)
		case NeedResults:
			err = l.await(ctx)
		}
		var pe *providerError
		switch {
		case errors.As(err, &pe):
			return l.end(ctx, events.CauseFailed, pe.msg, err)
		case errors.Is(err, errMovedOn):
			if reloads++; reloads > maxReloads {
				return nil, fmt.Errorf("run %s: the engine refused the loop's next move %d times in a row, the log read again each time (is another process driving the run?): %w", l.run, reloads, err)
			}
			if err := l.reload(ctx); err != nil {
				return nil, err
			}
		case err != nil:
			return nil, err
		default:
			reloads = 0
		}
	}
}
