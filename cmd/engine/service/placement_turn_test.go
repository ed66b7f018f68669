package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/events"
)

// A step that brings its model turn, in a location only B holds, sent to
// A (its own subject), is forwarded whole to B: B commits each turn and
// then its step, and the writes land in B's directory.
func TestStepsWithTheirTurnsRunWhereTheLocationIsHeld(t *testing.T) {
	e, mb, root, fwd := fleetCounted(t)
	c, err := client.Dial(e.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	loc := filepath.Join(root, "b", "w")
	info, err := c.StartRun(ctx, client.StartRunRequest{Location: loc, Model: &events.ModelSettings{Provider: "openai", Model: "m", Task: "write"}})
	if err != nil {
		t.Fatal(err)
	}
	const steps = 6
	for n := 1; n <= steps; n++ {
		call := writeCall(n)
		turn := &events.ModelTurnRecorded{Turn: n, Response: fmt.Sprintf("r%d", n), Stop: "tool_calls",
			Calls: []events.ModelCall{{ID: call.ID, Name: call.Tool, Args: string(call.Args)}}}
		var out client.StepOutcome
		err := askAt(e.Conn, client.SubjectAt("A", client.EndpointSubmitStep),
			client.SubmitStepRequest{Run: info.Run, Step: n, Calls: []client.CallRequest{call}, Turn: turn}, &out)
		if err != nil || out.Results[0].IsError {
			t.Fatalf("step %d sent to A: %+v, %v", n, out, err)
		}
		if _, err := os.Stat(filepath.Join(loc, fmt.Sprintf("f%d.txt", n))); err != nil {
			t.Errorf("write of step %d: %v", n, err)
		}
	}
	stored, err := mb.Host.Log.ReadRun(ctx, info.Run, 0)
	if err != nil {
		t.Fatal(err)
	}
	var turns int
	for _, s := range stored[1:] { // after the start
		if s.Commit.Host != "B" {
			t.Errorf("a %s commit by %s, want every one by the holder B", s.Commit.Kind, s.Commit.Host)
		}
		if s.Commit.Kind == events.KindTurn {
			turns++
		}
	}
	if turns != steps {
		t.Errorf("%d turn commits, want %d", turns, steps)
	}
	if got := fwd[0].n.Load(); got < steps {
		t.Errorf("A forwarded %d requests, want each of the %d steps", got, steps)
	}
}

// askAt sends req to subject and decodes the answer into out, or returns
// the service's error.
func askAt(nc *nats.Conn, subject string, req, out any) error {
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	msg, err := nc.Request(subject, b, 30*time.Second)
	if err != nil {
		return err
	}
	if code := msg.Header.Get(micro.ErrorCodeHeader); code != "" {
		return fmt.Errorf("%s: %s", code, msg.Header.Get(micro.ErrorHeader))
	}
	return json.Unmarshal(msg.Data, out)
}
