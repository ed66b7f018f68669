package bench

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/stepgate/stepgate/agent"
	"github.com/stepgate/stepgate/agent/fakeprovider"
	"github.com/stepgate/stepgate/agent/model"
	"github.com/stepgate/stepgate/agent/provider"
	"github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
)

// w8's shape: each task is w8Turns model turns of two calls (a read of a
// small file and a glob of the workspace, both allowed), then a turn of
// text that ends the run.
const (
	w8Turns = 10
	w8Calls = 2
	w8Model = "fake-model"
)

// w8Call is call i of turn t of w8's script (and of its step baseline).
func w8Call(_, i int) model.ToolCall {
	if i == 0 {
		return model.ToolCall{Name: "read", Args: []byte(`{"path":"notes.txt"}`)}
	}
	return model.ToolCall{Name: "glob", Args: []byte(`{"pattern":"*.txt"}`)}
}

// timedServer is the fake provider on a loopback port, with the time its
// handler spent serving: the model's side of a turn, which w8 takes out of
// the wall-clock time.
type timedServer struct {
	fake    *fakeprovider.Server
	url     string
	serving atomic.Int64 // nanoseconds inside the handler
	stop    func()
}

func startTimedServer(ctx context.Context) (*timedServer, error) {
	ts := &timedServer{fake: fakeprovider.New(fakeprovider.Config{Script: fakeprovider.Turns(w8Turns, w8Calls, w8Call), Model: w8Model})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ts.fake.ServeHTTP(w, r)
		ts.serving.Add(int64(time.Since(start)))
	})}
	go func() { _ = hs.Serve(ln) }()
	ctx, cancel := context.WithCancel(ctx)
	go func() { <-ctx.Done(); _ = hs.Close() }()
	ts.url, ts.stop = "http://"+ln.Addr().String(), cancel
	return ts, nil
}

// timedProvider is a model.Provider with the time its requests took as
// the loop saw them (the SDK's encoding and decoding, the loopback HTTP
// and the fake's serving).
type timedProvider struct {
	model.Provider
	busy time.Duration
}

func (p *timedProvider) Next(ctx context.Context, req model.Request) (model.Turn, error) {
	start := time.Now()
	t, err := p.Provider.Next(ctx, req)
	p.busy += time.Since(start)
	return t, err
}

// quietOutput is an agent.Output that prints nothing.
type quietOutput struct{}

func (quietOutput) Started(string, bool, agent.State)   {}
func (quietOutput) Text(string)                         {}
func (quietOutput) Turn(string, int, model.Turn)        {}
func (quietOutput) Step(*client.StepOutcome)            {}
func (quietOutput) Waiting(string, int, []agent.Ticket) {}
func (quietOutput) Ended(*agent.Result)                 {}

// w8Window is one window of the agent: its wall-clock time, the fake's
// serving time and the loop's time in model requests, over turns turns.
type w8Window struct {
	turns                int
	wall, serving, model time.Duration
	alloc                uint64 // bytes allocated by the whole process in its tasks
}

// allocKB is the window's allocation per turn, in KiB: what its turns
// give the garbage collector, which the two windows of w8Paired share.
func (w w8Window) allocKB() float64 {
	return math.Round(float64(w.alloc)/1024/float64(w.turns)*10) / 10
}

// w8Driver drives the agent loop through one API (the host in the wire
// contract's types, or the baseline's stand-in, newBaselineAPI) against
// the fake at ts, a task at a time, adding each task's times to its
// window.
type w8Driver struct {
	cfg      agent.Config
	tp       *timedProvider
	ts       *timedServer
	location string
	w        w8Window
}

func newW8Driver(api client.API, ts *timedServer, location string) (*w8Driver, error) {
	prov, err := provider.New(provider.OpenAI, provider.Options{BaseURL: ts.url + "/v1", RequestTimeout: time.Minute})
	if err != nil {
		return nil, err
	}
	tp := &timedProvider{Provider: prov}
	return &w8Driver{cfg: agent.Config{API: api, Provider: tp, Out: quietOutput{}, Stream: true, MaxSteps: w8Turns + 1},
		tp: tp, ts: ts, location: location}, nil
}

// task runs one task of w8Turns turns to its end.
func (d *w8Driver) task(ctx context.Context) error {
	set := events.ModelSettings{Provider: provider.OpenAI, Model: w8Model, BaseURL: d.ts.url + "/v1", Task: "read notes.txt and list the text files, ten times"}
	serving0, model0 := d.ts.serving.Load(), d.tp.busy
	var m runtime.MemStats
	runtime.ReadMemStats(&m) // outside the clock, as at the end
	alloc0 := m.TotalAlloc
	start := time.Now()
	res, err := agent.Start(ctx, d.cfg, agent.StartRequest{Location: d.location, Agent: "build", Settings: set})
	d.w.wall += time.Since(start)
	runtime.ReadMemStats(&m)
	d.w.alloc += m.TotalAlloc - alloc0
	d.w.serving += time.Duration(d.ts.serving.Load() - serving0)
	d.w.model += d.tp.busy - model0
	d.w.turns += w8Turns
	if err != nil {
		return err
	}
	if res.Cause != events.CauseCompleted || res.Steps != w8Turns {
		return fmt.Errorf("w8: run %s ended %s after %d steps (%s), want completed after %d", res.Run, res.Cause, res.Steps, res.Reason, w8Turns)
	}
	return nil
}

// w8Agent drives tasks runs of the agent loop through api, one after the
// other, against the fake at ts, in one window.
func w8Agent(ctx context.Context, api client.API, ts *timedServer, location string, tasks int) (w8Window, error) {
	d, err := newW8Driver(api, ts, location)
	if err != nil {
		return w8Window{}, err
	}
	for range tasks {
		if err := d.task(ctx); err != nil {
			return w8Window{}, err
		}
	}
	return d.w, nil
}

// w8Paired drives tasks tasks through each of two APIs, alternately (a
// task of one, then a task of the other, the first of each pair taking
// turns), so that what the machine does meanwhile falls on both windows
// alike.
func w8Paired(ctx context.Context, a, b client.API, ts *timedServer, location string, tasks int) (w8Window, w8Window, error) {
	da, err := newW8Driver(a, ts, location)
	if err != nil {
		return w8Window{}, w8Window{}, err
	}
	db, err := newW8Driver(b, ts, location)
	if err != nil {
		return w8Window{}, w8Window{}, err
	}
	for i := range tasks {
		first, second := da, db
		if i%2 == 1 {
			first, second = db, da
		}
		if err := first.task(ctx); err != nil {
			return w8Window{}, w8Window{}, err
		}
		if err := second.task(ctx); err != nil {
			return w8Window{}, w8Window{}, err
		}
	}
	return da.w, db.w, nil
}

// engineMS is the window's engine time per turn: the wall-clock time less
// the fake's serving time.
func (w w8Window) engineMS() float64 { return ms((w.wall - w.serving) / time.Duration(w.turns)) }

// loopMS is the window's time per turn outside model requests altogether.
func (w w8Window) loopMS() float64 { return ms((w.wall - w.model) / time.Duration(w.turns)) }

// w8Location is a workspace for w8's calls: one small file.
func w8Location(o Options) (string, func(), error) {
	dir, err := os.MkdirTemp(o.Dir, "stepgate-w8-ws-*")
	if err != nil {
		return "", nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("Ship the release on Friday.\n"), 0o600); err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	return dir, func() { os.RemoveAll(dir) }, nil
}

// w8Round is one round of w8 on a fresh engine: the agent's window, and
// beside it on the same host the step baseline (steps of the same two
// calls, submitted straight to the host) and, on a fresh raw stream, the
// commit of turn-sized messages.
func w8Round(ctx context.Context, o Options, ts *timedServer, location string, tasks int) (w8Figures, error) {
	ee, err := newEngineEnv(ctx, o, "echo")
	if err != nil {
		return w8Figures{}, err
	}
	defer ee.close()
	h := ee.host
	if _, err := w8Agent(ctx, commands.Wire{Host: h}, ts, location, 1); err != nil { // warm: the HTTP connection, the SDK, the location's catalogue
		return w8Figures{}, err
	}
	var f w8Figures
	if f.steps, err = w8Steps(ctx, h, location, tasks); err != nil {
		return w8Figures{}, err
	}
	base, closeBase, err := newBaselineAPI(ctx, o, h, tasks)
	if err != nil {
		return w8Figures{}, err
	}
	f.agent, f.baseline, err = w8Paired(ctx, commands.Wire{Host: h}, base, ts, location, tasks)
	closeBase()
	if err != nil {
		return w8Figures{}, err
	}
	if f.direct, err = w8Direct(ctx, h, location, tasks); err != nil {
		return w8Figures{}, err
	}
	if f.commits, err = rawTurnCommits(ctx, o, tasks*w8Turns); err != nil {
		return w8Figures{}, err
	}
	return f, nil
}

// w8Figures are one round's windows.
type w8Figures struct {
	agent, baseline        w8Window
	steps, direct, commits window
}

// perMS is the window's wall-clock time per step (or commit), in ms.
func (w window) perMS() float64 { return ms(w.wall / time.Duration(w.n)) }

// runW8 is w8: engine agent's loop (package agent, as engine agent --data
// runs it: in process, on an engine host, streaming) against the fake
// provider on loopback (the Chat Completions wire shape, no model latency),
// tasks tasks one after the other in each round, each of w8Turns turns of
// two allowed calls and a last turn of text; median of each figure over
// the rounds, each on a fresh engine.
//
// Time is per turn of calls (tasks×w8Turns), the window holding all of a
// task: its start, the answer's turn and its end are charged to its turns.
//   - engine_ms_per_turn: the window's wall-clock time less the time the
//     fake's handler spent serving (parsing the request, scripting the
//     turn, writing the response): what is left is this side's, the loop,
//     the engine, and the model client (the SDK building each request —
//     the whole conversation and the catalogue's schemas, every turn — and
//     decoding the stream) with the loopback HTTP.
//   - loop_ms_per_turn: the wall-clock time less the whole of the model
//     requests as the loop saw them: the engine's part alone (the
//     catalogue, the step with its turn's commit, the conversation).
//   - provider_ms_per_turn: the fake's serving time.
//   - direct_ms_per_turn: the engine's requests of the same tasks (start,
//     materialize, the step with its turn, the answer's turn, the end)
//     sent straight to the same host, without the loop or a model.
//   - step_ms: a step of the same two calls submitted straight to the same
//     host, in runs of w8Turns steps (no model, no turn recorded).
//   - turn_commit_ms: one turn-sized commit (the turn as the engine records
//     it) published to a fresh stream and acknowledged, without the engine.
//   - ratio: engine_ms_per_turn ÷ (step_ms + turn_commit_ms); loop_ratio
//     and direct_ratio: loop_ms_per_turn and direct_ms_per_turn ÷ the
//     same. Those baselines are steps and commits made back to back, on a
//     host that never waits for a model.
//   - baseline_ms_per_turn: the baseline made as a model-driven run makes
//     its steps (newBaselineAPI): the same loop against the same fake,
//     each turn's commit published raw and acknowledged, then its step
//     submitted straight, with the task's start and end as the agent's;
//     its time outside the model requests, as loop_ms_per_turn is the
//     agent's. Its tasks and the agent's take turns (w8Paired), so that
//     what else the machine does falls on both alike.
//   - turn_ratio: loop_ms_per_turn ÷ baseline_ms_per_turn: what a turn
//     costs the engine beyond its step and the conversation's commit, in
//     the same rhythm (the acceptance asks for at most 1).
//   - alloc_kb_per_turn and baseline_alloc_kb_per_turn: what the whole
//     process allocated per turn in the agent's tasks and in the
//     baseline's. The two windows take turns, so a garbage collection
//     falls on either; these say whether one of them gives the collector
//     more work than the other.
func runW8(ctx context.Context, o Options) (Result, error) {
	tasks, rounds := 20, 5
	if o.Quick {
		tasks, rounds = 4, 1
	}
	ts, err := startTimedServer(ctx)
	if err != nil {
		return nil, err
	}
	defer ts.stop()
	location, cleanup, err := w8Location(o)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	var turnsPerS, engine, loop, serving, direct, stepMS, commitMS, baseline, agentKB, baselineKB []float64
	for range rounds {
		f, err := w8Round(ctx, o, ts, location, tasks)
		if err != nil {
			return nil, err
		}
		aw := f.agent
		turnsPerS = append(turnsPerS, perSecond(aw.turns, aw.wall))
		engine, loop = append(engine, aw.engineMS()), append(loop, aw.loopMS())
		serving = append(serving, ms(aw.serving/time.Duration(aw.turns)))
		direct = append(direct, f.direct.perMS())
		baseline = append(baseline, f.baseline.loopMS())
		agentKB, baselineKB = append(agentKB, f.agent.allocKB()), append(baselineKB, f.baseline.allocKB())
		stepMS, commitMS = append(stepMS, f.steps.perMS()), append(commitMS, f.commits.perMS())
	}
	// Each task's turns, and its answer, were each sent to the model once.
	if total, _ := ts.fake.Count(); total != rounds*(2*tasks+1)*(w8Turns+1) {
		return nil, fmt.Errorf("w8: the fake provider answered %d requests, want %d", total, rounds*(2*tasks+1)*(w8Turns+1))
	}
	r := newResult(o)
	r["tasks"], r["turns"], r["calls_per_turn"], r["rounds"], r["stream"] = tasks, tasks*w8Turns, w8Calls, rounds, true
	r["turns_per_s"] = median(turnsPerS)
	r["engine_ms_per_turn"] = median(engine)
	r["loop_ms_per_turn"] = median(loop)
	r["provider_ms_per_turn"] = median(serving)
	r["direct_ms_per_turn"] = median(direct)
	r["step_ms"] = median(stepMS)
	r["turn_commit_ms"] = median(commitMS)
	base := median(stepMS) + median(commitMS)
	r["ratio"] = ratio(median(engine), base)
	r["loop_ratio"] = ratio(median(loop), base)
	r["direct_ratio"] = ratio(median(direct), base)
	r["baseline_ms_per_turn"] = median(baseline)
	r["turn_ratio"] = ratio(median(loop), median(baseline))
	r["alloc_kb_per_turn"], r["baseline_alloc_kb_per_turn"] = median(agentKB), median(baselineKB)
	return r, nil
}
