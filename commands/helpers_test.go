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
			}, executor.WithEffect(effect))
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
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h, err := commands.StartHost(ctx, s.JS, reg, commands.HostConfig{
		StateDir: t.TempDir(), Engine: commands.Config{Host: host},
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
