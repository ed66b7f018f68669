package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stepgate/stepgate/cmd/engine/hosting"
	"github.com/stepgate/stepgate/commands"
)

// serve's --max-calls reaches the engine: a step of more calls is
// invalid_input, a step of exactly as many runs.
func TestMaxCallsFlagBoundsAStep(t *testing.T) {
	var limits stepLimits
	fs := newFlags("serve", io.Discard)
	limits.register(fs)
	if err := parse(fs, []string{"--max-calls", "3", "--max-executions", "2"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	e, err := startEmbedded(ctx, hosting.Options{DataDir: t.TempDir(), HostName: "h1", Log: log, MaxCalls: limits.maxCalls, MaxExecutions: limits.maxExecutions})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	info, err := e.Host.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	calls := func(n int) []commands.CallRequest {
		cs := make([]commands.CallRequest, n)
		for i := range cs {
			cs[i] = commands.CallRequest{ID: fmt.Sprint("c", i), Tool: "glob", Args: []byte(`{"pattern":"*"}`)}
		}
		return cs
	}
	_, err = e.Host.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1, Calls: calls(4)})
	if got := commands.Code(err); got != commands.CodeInvalidInput {
		t.Fatalf("a step of 4 calls under --max-calls 3: %v (code %q), want invalid_input", err, got)
	}
	if _, err := e.Host.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1, Calls: calls(3)}); err != nil {
		t.Fatalf("a step of 3 calls under --max-calls 3: %v", err)
	}
}
