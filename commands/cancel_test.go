package commands_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/step/steptest"
)

// A caller that gives up while its step's calls run (an MCP client's
// cancellation, a client's timeout, a closed connection) does not leave the
// step open: the decided step is settled with each call's result — the
// cancelled call says it was cancelled — and the run goes on with the
// next step.
func TestCancelledCallerStillSettlesTheStep(t *testing.T) {
	s := steptest.Start(t, "")
	reg, err := executor.NewRegistry(withTestTools(t)...)
	if err != nil {
		t.Fatal(err)
	}
	h := startHost(t, s, reg, "h1")
	ctx := ctxT(t)
	loc := t.TempDir()
	gatePath := filepath.Join(loc, "gate")
	if err := os.WriteFile(gatePath, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	info, err := h.StartRun(ctx, commands.StartRunRequest{Location: loc})
	if err != nil {
		t.Fatal(err)
	}
	wait := json.RawMessage(`{"text":"done","path":"gate","mark":"started"}`)
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	submitted := make(chan error, 1)
	go func() {
		_, err := h.SubmitStep(sctx, commands.SubmitStepRequest{Run: info.Run, Step: 1, Calls: []commands.CallRequest{
			{ID: "a", Tool: "wait_fx", Args: wait}, {ID: "b", Tool: "echo", Args: json.RawMessage(`{"text":"hi"}`)}}})
		submitted <- err
	}()
	for { // the waiting call has started: the step is decided, its calls run
		if _, err := os.Stat(filepath.Join(loc, "started")); err == nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-submitted // the caller's own answer may be its cancellation
	st, _, err := h.Proj.Step(info.Run, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Final {
		t.Fatalf("step 1 is still open after its caller gave up: %+v", st)
	}
	if a := st.Call("a"); a.Result == nil || !a.Result.IsError || !strings.Contains(resultText(a.Result), "cancel") {
		t.Fatalf("the cancelled call's result: %+v", a.Result)
	}
	if b := st.Call("b"); b.Result == nil || b.Result.IsError || resultText(b.Result) != "hi" {
		t.Fatalf("the other call's result: %+v", b.Result)
	}
	if _, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 2, Calls: []commands.CallRequest{
		{ID: "c", Tool: "echo", Args: json.RawMessage(`{"text":"next"}`)}}}); err != nil {
		t.Fatalf("the next step after the cancelled one: %v", err)
	}
}

// resultText is a result's text parts, joined.
func resultText(r *events.ToolResultRecorded) string {
	var b strings.Builder
	for _, p := range r.Parts {
		b.WriteString(p.Text)
	}
	return b.String()
}
