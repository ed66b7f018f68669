package hosting_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/stepgate/stepgate/cmd/engine/hosting"
	"github.com/stepgate/stepgate/commands"
)

// A program embedding Stepgate starts a host as engine run and engine
// demo do: an embedded server with everything in one data directory. A
// run left open there is found again by the next start on the directory.
func ExampleStartEmbedded() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "stepgate-hosting-*")
	defer os.RemoveAll(dir)
	quiet := slog.New(slog.DiscardHandler)
	opts := hosting.Options{DataDir: dir, HostName: "example", TestTools: true, Log: quiet}

	e, err := hosting.StartEmbedded(ctx, opts)
	if err != nil {
		panic(err)
	}
	run, _ := e.Host.StartRun(ctx, commands.StartRunRequest{Location: dir})
	out, err := e.Host.SubmitStep(ctx, commands.SubmitStepRequest{Run: run.Run, Step: 1,
		Calls: []commands.CallRequest{{ID: "c1", Tool: "echo", Args: []byte(`{"text":"hello"}`)}}})
	if err != nil {
		panic(err)
	}
	fmt.Println(out.Results[0].Verdict, out.Results[0].Content)
	if err := e.Close(); err != nil {
		panic(err)
	}

	e, err = hosting.StartEmbedded(ctx, opts) // the same directory, another start
	if err != nil {
		panic(err)
	}
	defer e.Close()
	r, err := e.Host.Show(ctx, commands.ShowRequest{Run: run.Run})
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Status, len(r.Steps), "step")
	// Output:
	// allow hello
	// running 1 step
}
