package commands_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/builtin"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/step/steptest"
)

// counter counts the executions of the test tools, per tool name.
type counter struct{ echo, fx atomic.Int64 }

// registry is the builtins plus counting copies of echo.
func registry(t testing.TB, cnt *counter) *executor.Registry {
	t.Helper()
	tools, err := builtin.Tools()
	if err != nil {
		t.Fatal(err)
	}
	type in struct {
		Text string `json:"text"`
	}
	mk := func(name string, effect descriptor.EffectClass, n *atomic.Int64) *executor.Tool {
		tool, err := executor.New(name, "Counts its calls and returns its text.",
			func(_ context.Context, _ executor.Call, in in) (string, error) {
				n.Add(1)
				return in.Text, nil
			}, executor.WithEffect(effect),
			executor.WithRequests(func(_ executor.Call, in in) ([]descriptor.Request, error) {
				return []descriptor.Request{{Action: name, Resources: []string{in.Text}, Save: []string{"*"}}}, nil
			}))
		if err != nil {
			t.Fatal(err)
		}
		return tool
	}
	tools = append(tools, mk("count", descriptor.ReadOnly, &cnt.echo), mk("count_fx", descriptor.SideEffecting, &cnt.fx))
	reg, err := executor.NewRegistry(tools...)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// startHost starts an engine host on s with its own state directory.
func startHost(t testing.TB, s *steptest.Server, reg *executor.Registry, host string) *commands.Host {
	t.Helper()
	return startHostCfg(t, s, reg, commands.Config{Host: host})
}

// startHostWith starts a host whose configuration resolves rules with fn.
func startHostWith(t testing.TB, s *steptest.Server, reg *executor.Registry, host string, fn func(string) gate.Ruleset) *commands.Host {
	t.Helper()
	return startHostCfg(t, s, reg, commands.Config{Host: host, Rules: fn})
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

// startHostCfg starts a host with cfg.
func startHostCfg(t testing.TB, s *steptest.Server, reg *executor.Registry, cfg commands.Config) *commands.Host {
	t.Helper()
	host := cfg.Host
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h, err := commands.StartHost(ctx, s.JS, reg, commands.HostConfig{
		StateDir: t.TempDir(), Engine: cfg,
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
