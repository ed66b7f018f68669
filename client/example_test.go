package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/cmd/engine/service/servicetest"
)

// A Go agent's turn against an engine served on NATS: start a run, submit
// the model's tool calls, read the results, end the run.
func ExampleDial() {
	engine, err := servicetest.Start() // `engine serve`, in process, on loopback
	if err != nil {
		log.Fatal(err)
	}
	defer engine.Close()
	workspace, err := os.MkdirTemp("", "workspace-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(workspace)
	if err := os.WriteFile(filepath.Join(workspace, "notes.txt"), []byte("buy milk\n"), 0o644); err != nil {
		log.Fatal(err)
	}

	c, err := client.Dial(engine.URL)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()

	run, err := c.StartRun(ctx, client.StartRunRequest{Location: workspace})
	if err != nil {
		log.Fatal(err)
	}
	out, err := c.SubmitStep(ctx, client.SubmitStepRequest{Run: run.Run, Step: 1, Calls: []client.CallRequest{
		{ID: "c1", Tool: "read", Args: []byte(`{"path": "notes.txt"}`)},
		{ID: "c2", Tool: "no_such_tool"},
	}})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range out.Results {
		fmt.Printf("%s %s %s: %q\n", r.CallID, r.Tool, r.Verdict, r.Content)
	}

	// Errors carry stable codes and match the package's sentinels.
	_, err = c.SubmitStep(ctx, client.SubmitStepRequest{Run: run.Run, Step: 3, Calls: []client.CallRequest{
		{ID: "c3", Tool: "read", Args: []byte(`{"path": "notes.txt"}`)},
	}})
	fmt.Println(client.Code(err), errors.Is(err, client.ErrStepOrder))

	sum, err := c.EndRun(ctx, client.EndRunRequest{Run: run.Run})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(sum.Status, sum.Cause, sum.Steps)
	// Output:
	// c1 read allow: "     1\tbuy milk\n(end of file: 1 lines)"
	// c2 no_such_tool reject: "Unknown tool: no_such_tool"
	// step_order true
	// ended completed 1
}
