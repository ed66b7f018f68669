package commands_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/builtin"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/step/steptest"
)

// The ticket sweeper does not wait for a run whose approved call is still
// running (its reply holds the run) when nothing of that run is due.
func TestSweepDoesNotWaitForARunningCall(t *testing.T) {
	s := steptest.Start(t, "")
	tools, err := builtin.TestTools()
	if err != nil {
		t.Fatal(err)
	}
	reg, err := executor.NewRegistry(tools...)
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
	info, err := h.StartRun(ctx, commands.StartRunRequest{Location: loc,
		Rules: []gate.Rule{{Action: "wait_fx", Resource: "*", Effect: gate.Ask}}})
	if err != nil {
		t.Fatal(err)
	}
	args := json.RawMessage(`{"text":"done","path":"gate"}`)
	out, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1, Calls: []commands.CallRequest{
		{ID: "a", Tool: "wait_fx", Args: args}, {ID: "b", Tool: "wait_fx", Args: args}}})
	if err != nil || len(out.Tickets) != 2 {
		t.Fatalf("two asking calls: %+v, %v", out, err)
	}
	replied := make(chan error, 1)
	go func() {
		_, err := h.Reply(ctx, commands.ReplyRequest{Ticket: out.Tickets[0].ID, Reply: "once", Principal: "ops"})
		replied <- err
	}()
	for started := false; !started; time.Sleep(5 * time.Millisecond) { // the approved call is running
		s, _, err := h.Proj.Step(info.Run, 1)
		if err != nil {
			t.Fatal(err)
		}
		started = s.Call("a").Attempts == 1
	}
	swept := make(chan error, 1)
	go func() { swept <- h.SweepTickets(ctx) }()
	waited := false
	select {
	case err := <-swept:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(10 * time.Second):
		t.Error("the sweeper waited for the running call")
		waited = true
	}
	if err := os.Remove(gatePath); err != nil {
		t.Fatal(err)
	}
	if err := <-replied; err != nil {
		t.Fatal(err)
	}
	if waited {
		<-swept
	}
}
