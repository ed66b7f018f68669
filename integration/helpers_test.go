package integration

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/executortest"
	"github.com/stepgate/stepgate/step/steptest"
)

// counted is a host's tool registry (the built-ins and the counting tools)
// with its counts.
type counted struct {
	reg *executor.Registry
	executortest.Counts
}

func newCounted(t testing.TB) *counted {
	t.Helper()
	c := &counted{}
	c.reg = executortest.Registry(t, &c.Counts)
	return c
}

// startHost starts an engine host on s with its own state directory (dir ""
// for a fresh one); it is closed when the test ends.
func startHost(t testing.TB, s *steptest.Server, reg *executor.Registry, name, dir string) *commands.Host {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	h, err := commands.StartHost(ctxT(t), s.JS, reg, commands.HostConfig{StateDir: dir, Engine: commands.Config{Host: name}})
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

func call(id, tool, text string) commands.CallRequest {
	b, _ := json.Marshal(map[string]string{"text": text})
	return commands.CallRequest{ID: id, Tool: tool, Args: b}
}

// caughtUp waits until every follower's projection has applied what the
// stream held when leader last committed.
func caughtUp(t testing.TB, leader *commands.Host, followers ...*commands.Host) {
	t.Helper()
	ctx := ctxT(t)
	last, err := leader.Log.LastSeq(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range followers {
		if err := f.Proj.WaitFor(ctx, last); err != nil {
			t.Fatal(err)
		}
	}
}
