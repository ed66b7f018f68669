package commands_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/executortest"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/step/steptest"
)

// counter counts the executions of the counting tools.
type counter = executortest.Counts

// registry is the built-ins plus the counting tools.
func registry(t testing.TB, cnt *counter) *executor.Registry {
	t.Helper()
	return executortest.Registry(t, cnt)
}

// startHost starts an engine host on s with its own state directory.
func startHost(t testing.TB, s *steptest.Server, reg *executor.Registry, host string) *commands.Host {
	t.Helper()
	return startHostCfg(t, s, reg, commands.Config{Host: host})
}

// startHostWith starts a host whose configuration resolves rules with fn.
func startHostWith(t testing.TB, s *steptest.Server, reg *executor.Registry, host string, fn func(string) gate.Ruleset) *commands.Host {
	t.Helper()
	return startHostCfg(t, s, reg, commands.Config{Host: host, Policy: func(agent, _ string) commands.Policy {
		return commands.Policy{Rules: fn(agent)}
	}})
}

// caughtUp waits until every follower has applied the leader's stream.
func caughtUp(t testing.TB, leader *commands.Host, followers ...*commands.Host) {
	t.Helper()
	last, err := leader.Log.LastSeq(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range followers {
		if err := f.Proj.WaitFor(ctxT(t), last); err != nil {
			t.Fatal(err)
		}
	}
}

// startHostIn starts a host with its state in dir.
func startHostIn(t testing.TB, s *steptest.Server, reg *executor.Registry, host, dir string) *commands.Host {
	t.Helper()
	return startHostAt(t, s, reg, commands.Config{Host: host}, dir)
}

// startHostCfg starts a host with cfg.
func startHostCfg(t testing.TB, s *steptest.Server, reg *executor.Registry, cfg commands.Config) *commands.Host {
	t.Helper()
	return startHostAt(t, s, reg, cfg, t.TempDir())
}

func startHostAt(t testing.TB, s *steptest.Server, reg *executor.Registry, cfg commands.Config, dir string) *commands.Host {
	t.Helper()
	host := cfg.Host
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h, err := commands.StartHost(ctx, s.JS, reg, commands.HostConfig{
		StateDir: dir, Engine: cfg,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("close host %s: %v", host, err)
		}
	})
	return h
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func call(id, tool string, args any) commands.CallRequest {
	b, _ := json.Marshal(args)
	return commands.CallRequest{ID: id, Tool: tool, Args: b}
}

// tickets returns the tickets of one page (the first) of req.
func tickets(ctx context.Context, h *commands.Host, req commands.TicketsRequest) ([]commands.TicketView, error) {
	page, err := h.Tickets(ctx, req)
	if err != nil {
		return nil, err
	}
	return page.Tickets, nil
}
