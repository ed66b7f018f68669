// Package servicetest starts what `engine serve` runs, in process, for
// tests and runnable examples: an embedded NATS server listening on
// loopback, an engine host with the built-in tools, and the "stepgate"
// service of that host.
package servicetest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stepgate/stepgate/cmd/engine/service"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/builtin"
	"github.com/stepgate/stepgate/step"
)

// Engine is a served engine.
type Engine struct {
	// URL is the NATS server's client URL (loopback).
	URL string
	// Conn is the host's own connection to it.
	Conn *nats.Conn
	// Host is the engine host behind the service.
	Host *commands.Host

	closers []func()
	dir     string
}

// Start starts a served engine with its data in a new temporary directory
// (removed by Close); extra tools are installed beside the built-ins.
func Start(extra ...*executor.Tool) (*Engine, error) {
	return StartWith(commands.Config{}, extra...)
}

// StartWith is [Start] with the engine's configuration cfg (a tracer, say);
// its host name defaults to h1 and its output directory to one under the
// engine's data.
func StartWith(cfg commands.Config, extra ...*executor.Tool) (*Engine, error) {
	return startWith(cfg, nil, extra)
}

// StartBound is [Start] with the service binding runs to principals (see
// service.ServeBound).
func StartBound(b service.Binding, extra ...*executor.Tool) (*Engine, error) {
	return startWith(commands.Config{}, &b, extra)
}

func startWith(cfg commands.Config, bind *service.Binding, extra []*executor.Tool) (*Engine, error) {
	dir, err := os.MkdirTemp("", "stepgate-servicetest-")
	if err != nil {
		return nil, err
	}
	e := &Engine{dir: dir}
	if cfg.Host == "" {
		cfg.Host = "h1"
	}
	if cfg.ToolOutputDir == "" {
		cfg.ToolOutputDir = filepath.Join(dir, "tool-output")
	}
	if err := e.start(cfg, bind, extra); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

func (e *Engine) start(cfg commands.Config, bind *service.Binding, extra []*executor.Tool) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := step.StartEmbedded(ctx, step.EmbeddedConfig{Dir: filepath.Join(e.dir, "nats"), Listen: "127.0.0.1:0"})
	if err != nil {
		return err
	}
	e.closers = append(e.closers, srv.Shutdown)
	if e.Conn, err = srv.Connect(); err != nil {
		return err
	}
	e.closers = append(e.closers, e.Conn.Close)
	e.URL = srv.ClientURL()
	m, err := e.serveHost(ctx, e.Conn, filepath.Join(e.dir, "state"), cfg, bind, extra)
	if err == nil {
		e.Host = m.Host
	}
	return err
}

// Member is one more host of a served engine's fleet (see AddHost).
type Member struct {
	// Host is the member's engine host.
	Host *commands.Host
	stop func()
}

// Stop stops the member's service, then its host, as a stopping `engine
// serve` does; Close stops it too, if it still runs.
func (m *Member) Stop() { m.stop() }

// AddHost starts another engine host on the same server, with its own
// connection, state and service (one more member of the queue group);
// Close stops it with the rest. A host given Locations forwards what acts
// on a location it does not hold to the host that does
// (service.NewForwarder), as `engine serve` does.
func (e *Engine) AddHost(cfg commands.Config, extra ...*executor.Tool) (*Member, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nc, err := nats.Connect(e.URL)
	if err != nil {
		return nil, err
	}
	e.closers = append(e.closers, nc.Close)
	if cfg.ToolOutputDir == "" {
		cfg.ToolOutputDir = filepath.Join(e.dir, "tool-output-"+cfg.Host)
	}
	return e.serveHost(ctx, nc, filepath.Join(e.dir, "state-"+cfg.Host), cfg, nil, extra)
}

// serveHost starts a host on nc with its state in dir, and its service.
func (e *Engine) serveHost(ctx context.Context, nc *nats.Conn, dir string, cfg commands.Config, bind *service.Binding, extra []*executor.Tool) (*Member, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	tools, err := builtin.Tools()
	if err != nil {
		return nil, err
	}
	more, err := builtin.TestTools() // echo and echo_fx among them: the tests' steps call them
	if err != nil {
		return nil, err
	}
	reg, err := executor.NewRegistry(append(append(tools, more...), extra...)...)
	if err != nil {
		return nil, err
	}
	if cfg.Forward == nil && len(cfg.Locations) > 0 {
		cfg.Forward = service.NewForwarder(nc)
	}
	h, err := commands.StartHost(ctx, js, reg, commands.HostConfig{StateDir: dir, Engine: cfg})
	if err != nil {
		return nil, err
	}
	svcCtx, svcCancel := context.WithCancel(context.Background())
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	serve := service.Serve
	if bind != nil {
		serve = func(ctx context.Context, nc *nats.Conn, h *commands.Host, version string, log *slog.Logger) (func() error, error) {
			return service.ServeBound(ctx, nc, h, version, log, *bind)
		}
	}
	wait, err := serve(svcCtx, nc, h, "0.0.0-test", log)
	if err != nil {
		svcCancel()
		_ = h.Close()
		return nil, fmt.Errorf("serve: %w", err)
	}
	var once sync.Once
	m := &Member{Host: h, stop: func() { once.Do(func() { svcCancel(); _ = wait(); _ = h.Close() }) }}
	e.closers = append(e.closers, m.stop)
	return m, nil
}

// Close stops the service, the host and the server, and removes the data.
func (e *Engine) Close() {
	for i := len(e.closers) - 1; i >= 0; i-- {
		e.closers[i]()
	}
	e.closers = nil
	_ = os.RemoveAll(e.dir)
}
