package commands_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/builtin"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/step"
)

// Stepgate as a library: an embedded server, one host, one run of two calls
// — one allowed, one blocked by a run rule.
func ExampleStartHost() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "stepgate-example-*")
	defer os.RemoveAll(dir)

	srv, err := step.StartEmbedded(ctx, step.EmbeddedConfig{Dir: filepath.Join(dir, "nats")})
	if err != nil {
		panic(err)
	}
	defer srv.Shutdown()
	nc, _ := srv.Connect()
	defer nc.Close()
	js, _ := jetstream.New(nc)
	tools, _ := builtin.Tools()
	echo, _ := builtin.Echo() // a test tool (engine serve --test-tools): returns its text
	reg, _ := executor.NewRegistry(append(tools, echo)...)
	host, err := commands.StartHost(ctx, js, reg, commands.HostConfig{StateDir: filepath.Join(dir, "state")})
	if err != nil {
		panic(err)
	}
	defer host.Close()

	run, _ := host.StartRun(ctx, commands.StartRunRequest{Location: dir,
		Rules: []gate.Rule{{Action: "echo", Resource: "rm *", Effect: gate.Deny}}})
	out, err := host.SubmitStep(ctx, commands.SubmitStepRequest{Run: run.Run, Step: 1, Calls: []commands.CallRequest{
		{ID: "c1", Tool: "echo", Args: []byte(`{"text":"hello"}`)},
		{ID: "c2", Tool: "echo", Args: []byte(`{"text":"rm -rf /"}`)},
	}})
	if err != nil {
		panic(err)
	}
	for _, r := range out.Results {
		fmt.Println(r.CallID, r.Verdict, r.Content)
	}
	// Output:
	// c1 allow hello
	// c2 block blocked: denied by rule echo "rm *" (run override)
}
