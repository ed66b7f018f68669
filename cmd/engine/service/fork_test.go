package service_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stepgate/stepgate/client"
)

// The fork endpoint over NATS: the client picks the fork's id, so the same
// request sent twice is one fork; the forked run's next step runs; a fork
// at step 0 is invalid_input (refused by the request's own check) and one
// past the source's last step is step_order.
func TestForkOverNATS(t *testing.T) {
	e := start(t)
	c := client.New(e.Conn)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	run, err := c.StartRun(ctx, client.StartRunRequest{Location: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(map[string]string{"text": "hi"})
	if _, err := c.SubmitStep(ctx, client.SubmitStepRequest{Run: run.Run, Step: 1, Calls: []client.CallRequest{{ID: "c1", Tool: "echo", Args: args}}}); err != nil {
		t.Fatal(err)
	}
	req := client.ForkRequest{Run: run.Run, At: 1, Fork: "01M8S0000000000000000000FK"}
	res, err := c.Fork(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.Fork(ctx, req)
	if err != nil || *again != *res || res.Run != req.Fork || res.ForkedFrom.Run != run.Run || res.Steps != 1 {
		t.Fatalf("fork %+v, again %+v (%v)", res, again, err)
	}
	out, err := c.SubmitStep(ctx, client.SubmitStepRequest{Run: res.Run, Step: 2, Calls: []client.CallRequest{{ID: "c2", Tool: "echo", Args: args}}})
	if err != nil || !out.Final || out.Results[0].Content != "hi" {
		t.Fatalf("step 2 of the fork: %+v, %v", out, err)
	}
	if _, err := c.Fork(ctx, client.ForkRequest{Run: run.Run}); client.Code(err) != client.CodeInvalidInput {
		t.Errorf("fork at step 0: %v, want invalid_input", err)
	}
	if _, err := c.Fork(ctx, client.ForkRequest{Run: run.Run, At: 2}); client.Code(err) != client.CodeStepOrder {
		t.Errorf("fork past the last step: %v, want step_order", err)
	}
	var raw json.RawMessage
	if err := c.Do(ctx, client.EndpointFork, map[string]any{"run": run.Run, "at": 1, "rules": []any{}}, &raw); client.Code(err) != client.CodeInvalidInput {
		t.Errorf("fork with rules of the caller's: %v, want invalid_input (the fork's rules are the source's)", err)
	}
}
