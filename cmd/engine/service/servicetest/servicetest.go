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
	js, err := jetstream.New(e.Conn)
	if err != nil {
		return err
	}
	tools, err := builtin.Tools()
	if err != nil {
		return err
	}
	reg, err := executor.NewRegistry(append(tools, extra...)...)
	if err != nil {
		return err
	}
	e.Host, err = commands.StartHost(ctx, js, reg, commands.HostConfig{StateDir: filepath.Join(e.dir, "state"),
		Engine: cfg})
	if err != nil {
		return err
	}
	h := e.Host
	e.closers = append(e.closers, func() { _ = h.Close() })
	svcCtx, svcCancel := context.WithCancel(context.Background())
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	serve := service.Serve
	if bind != nil {
		serve = func(ctx context.Context, nc *nats.Conn, h *commands.Host, version string, log *slog.Logger) (func() error, error) {
			return service.ServeBound(ctx, nc, h, version, log, *bind)
		}
	}
	wait, err := serve(svcCtx, e.Conn, e.Host, "0.0.0-test", log)
	if err != nil {
		svcCancel()
		return fmt.Errorf("serve: %w", err)
	}
	e.closers = append(e.closers, func() { svcCancel(); _ = wait() })
	e.URL = srv.ClientURL()
	return nil
}

// Close stops the service, the host and the server, and removes the data.
func (e *Engine) Close() {
	for i := len(e.closers) - 1; i >= 0; i-- {
		e.closers[i]()
	}
	e.closers = nil
	_ = os.RemoveAll(e.dir)
}
