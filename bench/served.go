package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/cmd/engine/service"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/builtin"
)

// placedTool is the tool of w2x and of its baselines: a call that acts on
// the run's location, so that a step landing on a host that does not hold
// it is forwarded (echo needs no location and runs where it lands). It
// reads placedFile, benchText's 200 bytes, echo's payload.
const (
	placedTool = "read"
	placedFile = "f.txt"
)

// servedHost is an engine host with a connection of its own to the server
// and the stepgate service on it (a member of the queue group), configured
// as `engine serve --locations GLOB` configures one: it announces what it
// holds and forwards what acts on a location another host holds.
type servedHost struct {
	host *commands.Host
	stop func() error
}

// hostSpec names a served host and the locations it declares.
type hostSpec struct {
	name  string
	globs []string
}

// serveHost starts spec's host on e's server, its state under e's
// directory, its forwards and no_executor answers counted by m.
func serveHost(ctx context.Context, e *env, spec hostSpec, m commands.Metrics) (*servedHost, error) {
	nc, err := e.srv.Connect()
	if err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, err
	}
	tools, err := benchTools()
	if err != nil {
		nc.Close()
		return nil, err
	}
	reg, err := executor.NewRegistry(tools...)
	if err != nil {
		nc.Close()
		return nil, err
	}
	h, err := commands.StartHost(ctx, js, reg, commands.HostConfig{
		StateDir: filepath.Join(e.dir, "state-"+spec.name),
		Engine: commands.Config{Host: spec.name, Locations: spec.globs,
			Forward: service.NewForwarder(nc), Metrics: m},
	})
	if err != nil {
		nc.Close()
		return nil, err
	}
	svcCtx, cancel := context.WithCancel(context.Background())
	wait, err := service.Serve(svcCtx, nc, h, "0.0.0-bench", slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		cancel()
		err = errors.Join(err, h.Close())
		nc.Close()
		return nil, err
	}
	stop := func() error {
		cancel()
		err := errors.Join(wait(), h.Close())
		nc.Close()
		return err
	}
	return &servedHost{host: h, stop: stop}, nil
}

// placementCount counts the requests the hosts forwarded to a location's
// holder (and that it answered), and the no_executor answers: the
// Forwarded and NoExecutor hooks of commands.Metrics. The other hooks
// observe nothing.
type placementCount struct{ forwarded, noExecutor atomic.Int64 }

func (*placementCount) Commit(events.Kind, bool)       {}
func (*placementCount) Verdict(string)                 {}
func (*placementCount) ToolDone(string, time.Duration) {}
func (*placementCount) Resumed(time.Duration)          {}
func (c *placementCount) Forwarded(string)             { c.forwarded.Add(1) }
func (c *placementCount) NoExecutor(string)            { c.noExecutor.Add(1) }

// makeLocation makes the directory loc with placedFile in it.
func makeLocation(loc string) error {
	if err := os.MkdirAll(loc, 0o755); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if err := os.WriteFile(filepath.Join(loc, placedFile), []byte(echoText()), 0o644); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	return nil
}

// placedArgs are a placedTool call's arguments.
func placedArgs() json.RawMessage {
	args, _ := json.Marshal(builtin.ReadInput{Path: placedFile})
	return args
}

// placedScript prepares n steps of run, one placedTool call each (in
// process).
func placedScript(run string, n int) script {
	reqs := make(script, n)
	for i := range reqs {
		reqs[i] = commands.SubmitStepRequest{Run: run, Step: i + 1,
			Calls: []commands.CallRequest{{ID: "c1", Tool: placedTool, Args: placedArgs()}}}
	}
	return reqs
}

// served is one run's steps sent through the service (the queue group):
// the requests an agent's client sends, made before the clock runs.
type served []client.SubmitStepRequest

// startServed starts a run in loc through the service and prepares n
// steps of it, one placedTool call each.
func startServed(ctx context.Context, c *client.Client, loc string, n int) (served, string, error) {
	info, err := c.StartRun(ctx, client.StartRunRequest{Location: loc})
	if err != nil {
		return nil, "", fmt.Errorf("start a run in %s: %w", loc, err)
	}
	reqs := make(served, n)
	for i := range reqs {
		reqs[i] = client.SubmitStepRequest{Run: info.Run, Step: i + 1,
			Calls: []client.CallRequest{{ID: "c1", Tool: placedTool, Args: placedArgs()}}}
	}
	return reqs, info.Run, nil
}

// drive submits the steps in order through the service, each answered
// before the next.
func (s served) drive(ctx context.Context, c *client.Client) error {
	for i, req := range s {
		out, err := c.SubmitStep(ctx, req)
		if err != nil {
			return fmt.Errorf("step %d: %w", i+1, err)
		}
		if len(out.Results) != 1 || out.Results[0].IsError || !out.Final {
			return fmt.Errorf("step %d: not one final result: %+v", i+1, out)
		}
	}
	return nil
}

// driveAll drives the scripts concurrently, one goroutine each, as one
// window.
func driveAll(ctx context.Context, c *client.Client, scripts []served, steps int) (window, error) {
	return timed(steps, func() error {
		var wg sync.WaitGroup
		errs := make([]error, len(scripts))
		for i, sc := range scripts {
			wg.Go(func() { errs[i] = sc.drive(ctx, c) })
		}
		wg.Wait()
		return errors.Join(errs...)
	})
}
